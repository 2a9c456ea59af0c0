"""The study page's safety–utility fragment (report:study_safety): staff only, a page without
htmx and a fragment with it, "no harmful controls" for a study without them, and the section
with its frontier figures for one with them."""

import pytest
from django.urls import reverse

from annotations import services
from annotations.imports import importers
from tests.support.django_fixtures import client_for, manifest_line, write_manifest

pytestmark = pytest.mark.django_db


def controls_study(tmp_path, *, harmful: bool):
    slug = "with-controls" if harmful else "without-controls"
    study = services.study_create(name=slug, slug=slug, overlap_k=1, min_seconds_per_item=0.0)
    values = ("neutral", "Korean", "Nigerian", "US")
    lines = []
    for prompt in range(6):
        for intent in ("benign", "harmful") if harmful else ("benign",):
            for k, value in enumerate(values):
                attribute = "neutral" if value == "neutral" else "culture"
                refused = (prompt + k + (intent == "harmful")) % 3 == 0
                lines.append(
                    manifest_line(
                        f"{prompt}-{intent}-{value}",
                        value=value,
                        attribute=attribute,
                        base=f"bp{prompt}",
                        intent=intent,
                        judgments=[
                            {
                                "judge": "vlm-a@1",
                                "hard_refusal": refused,
                                "cue": None if refused else "retained",
                            }
                        ],
                    )
                )
    importers.items_import(study=study, manifest=write_manifest(tmp_path / slug, lines))
    return study


def test_without_controls_the_section_says_how_to_add_them(tmp_path, staff_client):
    study = controls_study(tmp_path, harmful=False)
    url = reverse("report:study_safety", args=[study.slug])
    page = staff_client.get(url).content.decode()
    assert "<html" in page and "has no harmful controls" in page and "--harmful-controls" in page
    fragment = staff_client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in fragment and 'id="safety"' in fragment


def test_with_controls_the_section_has_findings_table_and_figures(tmp_path, staff_client):
    study = controls_study(tmp_path, harmful=True)
    url = reverse("report:study_safety", args=[study.slug])
    fragment = staff_client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "Source: auto:vlm-a@1" in fragment and "safety-table" in fragment
    assert "refuses benign prompts about" in fragment
    figure = reverse(
        "report:study_report_figure", args=[study.slug, "frontier--auto:vlm-a@1--gen-a", "svg"]
    )
    assert figure in fragment
    image = staff_client.get(figure)
    assert image.status_code == 200 and image["Content-Type"] == "image/svg+xml"
    csv = staff_client.get(figure.replace(".svg", ".csv")).content.decode()
    assert csv.splitlines()[0].startswith("source,generator,attribute,value,over_refusal")
    report = staff_client.get(reverse("report:study_report", args=[study.slug])).content.decode()
    assert '<h2 id="safety">7. Safety–utility trade-off by attribute</h2>' in report


def test_the_fragment_is_staff_only(tmp_path, annotators, client):
    study = controls_study(tmp_path, harmful=False)
    url = reverse("report:study_safety", args=[study.slug])
    assert client.get(url).status_code == 302
    assert client_for(annotators[0]).get(url).status_code in (302, 403)

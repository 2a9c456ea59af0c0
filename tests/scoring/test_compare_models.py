"""Models side by side in the app: the selector (one study's generators, or studies), the staff
page and its JSON, the report section and the ``compare_models`` command."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from annotations import services
from annotations.imports import importers
from scoring.comparison.selectors import ComparisonError, comparison_document, comparison_inputs
from scoring.report import schema
from tests.support.django_fixtures import client_for, manifest_line, write_image, write_manifest

pytestmark = pytest.mark.django_db

VALUES = ("Korean", "Nigerian", "US")
N_BASE_PROMPTS = 10


def _study(slug, tmp_path, *, generators, refusal_value="Nigerian"):
    """Every base prompt × value on every generator, one judgment each: ``refusal_value`` is
    refused on every other prompt by the last generator."""
    study = services.study_create(name=slug.title(), slug=slug, overlap_k=1)
    root = tmp_path / slug
    image = write_image(root / "img" / "one.png")
    lines = []
    for generator in generators:
        for prompt in range(N_BASE_PROMPTS):
            for value in VALUES:
                refused = (
                    generator == generators[-1] and value == refusal_value and prompt % 2 == 0
                ) or (value == "US" and prompt == 3)
                lines.append(
                    manifest_line(
                        f"{generator}-{prompt}-{value}",
                        image=image.relative_to(root).as_posix(),
                        value=value,
                        base=f"bp{prompt}",
                        domain=f"domain{prompt // 5}",
                        generator=generator,
                        judgments=[
                            {
                                "judge": "vlm-a@1",
                                "hard_refusal": refused,
                                "cue": None if refused else "retained",
                            }
                        ],
                    )
                )
    importers.items_import(study=study, manifest=write_manifest(root, lines))
    return study


@pytest.fixture
def two_generators(tmp_path):
    return _study("two-gens", tmp_path, generators=["model-v1", "model-v2"])


@pytest.fixture
def two_versions(tmp_path):
    return (
        _study("version-1", tmp_path, generators=["model"], refusal_value="Korean"),
        _study("version-2", tmp_path, generators=["model"]),
    )


def test_one_study_compares_its_generators_and_several_compare_studies(
    two_generators, two_versions
):
    inputs = comparison_inputs(studies=[two_generators])
    assert inputs.model_column == "generator" and inputs.models == ["model-v1", "model-v2"]
    assert list(inputs.sources) == ["auto:vlm-a@1"]
    document = comparison_document(inputs, n_resamples=50)
    assert schema.validation_errors(document) == []
    change = document["models_side_by_side"]["sources"]["auto:vlm-a@1"]["change"]
    assert change["design"] == "paired" and change["n_prompts_shared"] == 30
    nigerian = next(
        r for r in change["rates"] if r["measure"] == "refusal" and r["value"] == "Nigerian"
    )
    assert nigerian["difference"] == pytest.approx(0.5) and nigerian["test"] == "cluster-bootstrap"
    # One judgment per item: as many items as labels, and the interval agrees with the test.
    assert nigerian["n_items_candidate"] == nigerian["n_candidate"] == N_BASE_PROMPTS
    assert (nigerian["ci_low"] > 0) == (nigerian["p_value"] < 0.05)

    inputs = comparison_inputs(studies=list(two_versions))
    assert inputs.model_column == "study" and inputs.models == ["version-1", "version-2"]
    section = comparison_document(inputs, n_resamples=50)["models_side_by_side"]
    assert section["baseline"] == "version-1" and section["candidate"] == "version-2"
    assert section["sources"]["auto:vlm-a@1"]["change"]["design"] == "paired"


def test_bad_choices_are_one_line(two_generators, tmp_path):
    inputs = comparison_inputs(studies=[two_generators])
    with pytest.raises(ComparisonError, match="unknown baseline 'nope'; choose one of model-v1"):
        comparison_document(inputs, baseline="nope")
    with pytest.raises(ComparisonError, match="two different"):
        comparison_document(inputs, baseline="model-v1", candidate="model-v1")
    with pytest.raises(ComparisonError, match="unknown source 'human'"):
        comparison_document(inputs, sources=["human"])
    lone = _study("lone", tmp_path, generators=["only"])
    with pytest.raises(ComparisonError, match="two or more generators; found only"):
        comparison_document(comparison_inputs(studies=[lone]))


def test_the_page_is_staff_only(two_generators, annotators):
    url = reverse("comparison:compare_models") + f"?studies={two_generators.slug}"
    anonymous = Client().get(url)
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    assert client_for(annotators[0]).get(url).status_code == 403
    assert client_for(annotators[0]).get(url + "&format=json").status_code == 403


def test_the_page_renders_the_table_and_downloads_json(two_generators, staff_client, settings):
    page = staff_client.get(reverse("comparison:compare_models"))
    assert page.status_code == 200 and "Two-Gens" in page.content.decode()
    url = reverse("comparison:compare_models") + f"?studies={two_generators.slug}"
    html = staff_client.get(url).content.decode()
    assert "model-v1 → model-v2" in html and "B − A [CI]" in html
    assert "cluster bootstrap" in html and "Δ (max − min)" in html and "table-scroll" in html
    assert "Paired by prompt: 30 prompts shared" in html
    download = staff_client.get(url + "&baseline=model-v2&candidate=model-v1&format=json")
    assert download["Content-Type"] == "application/json"
    document = json.loads(download.content)
    assert schema.validation_errors(document) == []
    assert document["models_side_by_side"]["baseline"] == "model-v2"


def test_the_page_says_what_is_wrong(two_generators, staff_client):
    url = reverse("comparison:compare_models")
    bad = staff_client.get(url + f"?studies={two_generators.slug}&baseline=nope")
    assert bad.status_code == 400 and "unknown baseline" in bad.content.decode()
    missing = staff_client.get(url + "?studies=no-such-study")
    assert missing.status_code == 400 and "Select a valid choice" in missing.content.decode()


def test_the_study_page_links_to_the_comparison(two_generators, staff_client):
    html = staff_client.get(reverse("staff:study_detail", args=[two_generators.slug])).content
    assert (reverse("comparison:compare_models") + "?studies=two-gens").encode() in html


def test_a_one_generator_study_offers_no_comparison_of_itself(two_versions, staff_client):
    """Issue 36 §4: its button opened the comparison of its one generator, a 400 page."""
    html = staff_client.get(reverse("staff:study_detail", args=["version-1"])).content.decode()
    assert "?studies=version-1" not in html
    assert "one generator (model)" in html and "choose it with other studies" in html
    # What the button opens instead is the page itself, answered 200.
    assert staff_client.get(reverse("comparison:compare_models")).status_code == 200


def _label_every_item(study, username):
    from annotations.models import Assignment

    annotator = services.annotator_create(username=username, password="pw-12345678")
    batch = services.batch_create(
        request=services.batch_request_build(
            study=study, name="people", policy="k_overlap", annotators=[annotator], overlap_k=1
        )
    )
    for assignment in Assignment.objects.filter(batch=batch).select_related("item"):
        refused = assignment.item.item_id.endswith("-Nigerian")
        services.annotation_submit(
            assignment=assignment, hard_refusal=refused, cue_label=None if refused else "erased"
        )


def test_comparing_studies_with_human_labels_shows_the_humans_by_default(
    two_versions, staff_client
):
    """Issue 36 §4: the judge came first in name order and was the default, so studies with
    people's labels showed the judge's (or "No change computed")."""
    for study, username in zip(two_versions, ("ann-1", "ann-2"), strict=True):
        _label_every_item(study, username)
    url = reverse("comparison:compare_models") + "?studies=version-1&studies=version-2"
    response = staff_client.get(url)
    assert response.status_code == 200
    assert response.context["source"] == "human"
    html = response.content.decode()
    assert '<option value="human" selected>' in html and "No change computed" not in html
    # Asked for, the judge is still there.
    judged = staff_client.get(url + "&source=auto:vlm-a@1")
    assert judged.context["source"] == "auto:vlm-a@1"


def test_the_report_has_the_section_with_several_generators(
    two_generators, two_versions, staff_client, monkeypatch
):
    from scoring.report import dataset as report

    monkeypatch.setattr(
        report, "DEFAULTS", {**report.DEFAULTS, "n_resamples": 50, "n_permutations": 50}
    )
    url = reverse("report:study_report_json", args=[two_generators.slug])
    document = json.loads(staff_client.get(url).content)
    assert schema.validation_errors(document) == []
    assert document["models_side_by_side"]["baseline"] == "model-v1"
    html = staff_client.get(reverse("report:study_report", args=[two_generators.slug])).content
    assert "12. Models side by side" in html.decode() and 'id="models"' in html.decode()
    single = staff_client.get(reverse("report:study_report_json", args=[two_versions[0].slug]))
    assert "models_side_by_side" not in json.loads(single.content)


def test_command_writes_the_comparison(two_versions, tmp_path):
    out = tmp_path / "comparison.json"
    call_command(
        "compare_models", *_study_args(["version-1", "version-2"]), out=out, n_resamples=50
    )
    document = json.loads(out.read_text())
    assert schema.validation_errors(document) == []
    assert [s["slug"] for s in document["studies"]] == ["version-1", "version-2"]


def _study_args(slugs):
    """``--study`` repeated (call_command passes a required list option as one argument)."""
    return [arg for slug in slugs for arg in ("--study", slug)]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"studies": ["nope"]}, "unknown study 'nope'"),
        ({"studies": ["version-1"]}, "two or more generators; found model"),
        ({"studies": ["version-1", "version-2"], "baseline": "x"}, "unknown baseline 'x'"),
        # Past the parser (keywords), the statistics name their own parameter.
        ({"studies": ["version-1", "version-2"], "n_resamples": -1}, "n_resamples must be"),
    ],
)
def test_command_bad_input_is_one_line(two_versions, tmp_path, options, message):
    studies = _study_args(options.pop("studies"))
    with pytest.raises(CommandError, match=message) as error:
        call_command("compare_models", *studies, out=tmp_path / "x.json", **options)
    assert "\n" not in str(error.value) and not (tmp_path / "x.json").exists()
    with pytest.raises(CommandError, match="does not exist"):
        call_command("compare_models", *studies, out=tmp_path / "no" / "x.json")

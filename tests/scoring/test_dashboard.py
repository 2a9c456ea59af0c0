"""The staff study page reads in a minute: the summary fragment and its selector,
the pages around it (disparities, judges, batch form, admin, metrics API)."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotations import services
from annotations.imports import importers
from annotations.models import Annotation, Assignment, Study
from scoring.metrics import document as metrics
from scoring.metrics.selectors import study_summary
from scoring.report.documents import report_document_cached
from tests.support.django_fixtures import manifest_line, write_manifest

pytestmark = pytest.mark.django_db


def answer_all(batch, *, refuse_every=4):
    rows = Assignment.objects.filter(batch=batch).select_related("item", "batch__study")
    for index, assignment in enumerate(rows.order_by("pk")):
        refused = index % refuse_every == 0
        services.annotation_submit(
            assignment=assignment, hard_refusal=refused, cue_label=None if refused else "retained"
        )


def study_of(size: int, slug: str, annotators, tmp_path) -> Study:
    study = services.study_create(name=slug, slug=slug, overlap_k=2, min_seconds_per_item=0.0)
    values = ("Korean", "Nigerian", "US")
    lines = [
        manifest_line(
            f"{slug}-{i}",
            value=values[i % 3],
            base=f"bp{i // 3}",
            judgments=[
                {
                    "judge": "vlm-a@1",
                    "hard_refusal": i % 5 == 0,
                    "cue": None if i % 5 == 0 else "erased",
                }
            ],
        )
        for i in range(size)
    ]
    importers.items_import(study=study, manifest=write_manifest(tmp_path / slug, lines))
    batch = services.batch_create(
        request=services.batch_request_build(
            study=study,
            name=f"{slug}-batch",
            policy="k_overlap",
            annotators=annotators[:3],
            overlap_k=2,
            seed=1,
        )
    )
    answer_all(batch)
    return study


def test_summary_selector_runs_the_same_queries_whatever_the_study_size(annotators, tmp_path):
    counts = []
    for size, slug in ((6, "small"), (30, "large")):
        study = study_of(size, slug, annotators, tmp_path)
        study_summary(study=study)  # computes and caches the metrics document and the report
        with CaptureQueriesContext(connection) as queries:
            summary = study_summary(study=study)
        counts.append(len(queries))
        assert len(summary["progress"]["annotators"]) == 3
    assert counts[0] == counts[1], counts
    # One data fingerprint of six queries (answers, judgments, items, adjudications, label
    # exclusions, equivalence margins; shared by the cached metrics and report), progress per
    # batch and annotator, flags waiting.
    assert counts[0] == 6 + 2 + 1


def test_summary_numbers_are_the_exports(batch, annotators):
    answer_all(batch)
    summary = study_summary(study=batch.study)
    document = metrics.metrics_document_cached(study=batch.study)
    report = report_document_cached(study=batch.study)
    for row in summary["agreement"]:
        block = document["agreement"]["inter_annotator"][row["question"]]
        assert row["alpha"]["value"] == block["krippendorff_alpha"]
    deltas = {
        (r["measure"], r["attribute"]): r["delta"]
        for r in report["disparities"]
        if r["source"] == "human" and r["delta"] is not None
    }
    for row in summary["disparities"]:
        assert row["delta"]["value"] == deltas[(row["measure"], row["attribute"])]
    progress = summary["progress"]
    assert progress["batches"] == [
        {
            "pk": batch.pk,
            "name": "b1",
            "policy": "k_overlap",
            "done": 12,
            "total": 12,
            "percent": 100,
        }
    ]
    assert [r["username"] for r in progress["annotators"]] == ["ann0", "ann1"]


def test_summary_fragment_shows_progress_agreement_disparities_and_warnings(
    batch, annotators, staff_client
):
    answer_all(batch)
    Annotation.objects.filter(pk=Annotation.objects.first().pk).update(broken_image=True)
    url = reverse("metrics:study_summary", args=[batch.study.slug])
    fragment = staff_client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in fragment and 'id="summary"' in fragment
    for text in (
        "Agreement between annotators",
        "Krippendorff",
        "Largest disparities",
        "Needs action",
        "ann0",
        "b1",
        "12 / 12",
        "flagged as broken images",
    ):
        assert text in fragment, text
    # One base prompt per value in this study: Δ has no interval, and the page says why.
    assert "no interval:" in fragment
    page = staff_client.get(url).content.decode()
    assert "<html" in page and "sortable-tables.js" in page


def test_study_page_puts_the_summary_first_and_the_details_in_details(batch, staff_client):
    page = staff_client.get(reverse("staff:study_detail", args=[batch.study.slug])).content.decode()
    summary_at = page.index(reverse("metrics:study_summary", args=[batch.study.slug]))
    assert summary_at < page.index('<details id="statistics-details"')
    # statistics, disparities, safety-utility, audit context, batches and jobs, downloads
    assert page.count('<details id="') == 6 and "sortable-tables.js" in page
    assert reverse("report:study_safety", args=[batch.study.slug]) in page


def test_disparities_is_a_page_and_a_fragment_for_htmx(batch, staff_client):
    answer_all(batch)
    url = reverse("report:study_disparities", args=[batch.study.slug])
    page = staff_client.get(url).content.decode()
    assert "<title>Test study: disparities</title>" in page and "<h1>" in page
    assert 'class="table sortable"' in page and "app.css" in page
    fragment = staff_client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in fragment and 'id="disparities"' in fragment
    # Human rows before the judges'.
    assert fragment.index("<td>human</td>") < fragment.index("<td>auto:vlm-a@1</td>")


def test_statistics_list_human_rates_first_and_show_intervals(batch, staff_client):
    answer_all(batch)
    page = staff_client.get(
        reverse("metrics:study_statistics", args=[batch.study.slug]), HTTP_HX_REQUEST="true"
    ).content.decode()
    assert page.index("<h4>human</h4>") < page.index("<h4>auto:vlm-a@1</h4>")
    assert 'class="full-width"' in page and "Band (α)" in page


def test_judges_page_has_no_empty_judge_dropdown(imported_study, staff_client, settings):
    settings.ACRB_JUDGES = {}
    page = staff_client.get(reverse("scoring:study_judges", args=[imported_study.slug]))
    html = page.content.decode()
    assert 'name="judge"' not in html
    assert "No hard-refusal judge with a CLIP score is configured" in html


def test_batch_form_is_styled_like_the_other_staff_forms(imported_study, staff_client):
    html = staff_client.get(reverse("staff:batch_create", args=[imported_study.slug])).content
    assert b'class="card stacked-form"' in html


def test_admin_annotation_list_names_annotator_item_and_label(batch, staff_user, client):
    answer_all(batch)
    staff_user.is_superuser = True
    staff_user.save()
    client.force_login(staff_user)
    url = reverse("admin:annotations_annotation_changelist")
    client.get(url)
    with CaptureQueriesContext(connection) as queries:
        html = client.get(url).content.decode()
    assert "Assignment object" not in html and "Annotation object" not in html
    assert "ann0" in html and "test-study/item-0" in html and "not refused · cue retained" in html
    rows = html.count('class="field-annotator"')
    assert rows == 12 and len(queries) < 20, len(queries)


# What Chromium sends for a page: the browsable renderer would have won it.
BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


def test_metrics_api_answers_json_even_to_a_browser(batch, staff_client):
    answer_all(batch)
    response = staff_client.get(
        reverse("metrics:study_metrics", args=[batch.study.slug]), HTTP_ACCEPT=BROWSER_ACCEPT
    )
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    assert "agreement" in json.loads(response.content)


def test_summary_of_a_new_study_says_there_is_nothing_yet(study, staff_client):
    url = reverse("metrics:study_summary", args=[study.slug])
    fragment = staff_client.get(url, HTTP_HX_REQUEST="true")
    assert fragment.status_code == 200
    html = fragment.content.decode()
    for text in (
        "undefined: no item has two or more ratings",
        "No disparity is defined yet.",
        "No batch yet.",
        "Audit context not stated: system kind, intended purpose, annotator recruitment, annotator pay.",
    ):
        assert text in html, text
    assert reverse("staff:study_audit_context", args=[study.slug]) in html
    # Once the context is recorded, nothing needs action.
    study.system_kind, study.intended_purpose = "general_purpose", "Text-to-image generation"
    study.annotator_recruitment, study.annotator_pay = "Lab volunteers", "GBP 12 per hour"
    study.save()
    html = staff_client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "Nothing needs action." in html and "Audit context not stated" not in html


def test_a_batch_without_assignments_is_not_shown_as_complete(batch, staff_client):
    """A recruitment batch waits for its recruits: 0 / 0 is "no assignments yet", not 100 %."""
    services.batch_create(
        request=services.batch_request_build(
            study=batch.study,
            name="empty-batch",
            policy="manual",
            annotators=[],
            overlap_k=1,
            seed=1,
            manual_pairs=[],
        )
    )
    url = reverse("metrics:study_summary", args=[batch.study.slug])
    fragment = staff_client.get(url, HTTP_HX_REQUEST="true").content.decode()
    row = fragment[fragment.index("empty-batch") :].split("</tr>", 1)[0]
    assert "no assignments yet" in row and "100%" not in row

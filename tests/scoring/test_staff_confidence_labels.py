"""Issue 34 §3: the staff study page's "[95% CI]" headings print the level its documents were
computed at, as the report's do (scoring.report.display.confidence_label)."""

import pytest
from django.core.cache import cache
from django.urls import reverse

from annotations import services
from annotations.models import Assignment
from scoring.metrics.document import cached_for_study_data, metrics_document, metrics_settings
from scoring.report import tasks
from scoring.report.documents import report_document, report_settings

pytestmark = pytest.mark.django_db


def test_staff_summary_and_statistics_print_the_documents_level(staff_client, batch):
    for assignment in Assignment.objects.filter(batch=batch).order_by("pk")[:6]:
        services.annotation_submit(assignment=assignment, hard_refusal=False, cue_label="erased")
    cache.clear()
    study = batch.study
    metrics = metrics_document(study=study)
    metrics["meta"]["confidence"] = 0.9
    report = report_document(study=study)
    report["settings"]["confidence"] = 0.9
    # Today's documents, as the background job would have stored them, computed at 90 %.
    cached_for_study_data(
        "metrics", study=study, settings=metrics_settings(), compute=lambda: metrics
    )
    cached_for_study_data(
        "report", study=study, settings=report_settings(study=study), compute=lambda: report
    )
    assert tasks.page_documents(study=study).current
    for name in ("metrics:study_statistics", "metrics:study_summary"):
        html = staff_client.get(reverse(name, args=[study.slug]), HTTP_HX_REQUEST="true")
        text = html.content.decode()
        assert "90% CI]" in text, name
        assert "95% CI" not in text, name

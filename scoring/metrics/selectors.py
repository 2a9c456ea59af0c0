"""Reads of the staff study page's summary: the cached metrics document and audit report, the
progress and the flags waiting, in a fixed number of queries. Kept apart from
``scoring.selectors`` so the Celery workers that import the scoring services do not load the
statistics stack (statsmodels, scipy, pyarrow: about 0.7 s each).
"""

from __future__ import annotations

from annotations import selectors as annotation_selectors
from annotations.models import Study
from annotations.staff import audit_context as study_settings
from scoring.metrics import headlines as summary
from scoring.metrics.document import metrics_document_cached, validation_table
from scoring.report.documents import report_document_cached


def study_summary(*, study: Study, metrics: dict | None = None, report: dict | None = None) -> dict:
    """Everything the staff study page's summary shows (docs/annotation.md, "Staff pages"), in a
    fixed number of queries: the cached metrics document and audit report (the export's and the
    report's numbers, one definition each), progress per batch and annotator, and the flags
    waiting for review."""
    if metrics is None or report is None:  # the page passes the documents it was served
        fingerprint = annotation_selectors.study_data_fingerprint(study=study)  # once for both
        metrics = metrics_document_cached(study=study, fingerprint=fingerprint)
        report = report_document_cached(study=study, fingerprint=fingerprint)
    progress = annotation_selectors.study_progress(study=study)
    validation_rows = validation_table(metrics)
    return {
        "progress": progress,
        # Three rows: the summary stays on one laptop screen; the details hold every row.
        "ppi": summary.ppi_headline(metrics, limit=3),
        "agreement": summary.agreement_headline(metrics),
        "disparities": (disparities := summary.largest_disparities(report)),
        "claims": summary.claim_counts(disparities),
        "alpha": report["settings"]["alpha"],
        "warnings": summary.warnings(
            metrics=metrics,
            report=report,
            validation_rows=validation_rows,
            annotators=progress["annotators"],
            flags_waiting=annotation_selectors.flag_queue_size(study=study),
            audit_context_missing=study_settings.audit_context_missing(study=study),
        ),
        "synthetic_demo": study.is_synthetic_demo,
    }

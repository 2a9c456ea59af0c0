"""The audit report documents as the pages serve them: a study's report and a REFLECT face
set's, recomputed from the stored records through the inputs a report folder holds
(``inputs`` -> ``bundle``), rendered (``render``) and cached per state of the data.

This module sits above ``inputs`` and ``selectors`` (which it reads through), so neither needs
to import it back.
"""

from __future__ import annotations

from typing import Any

from django.core.cache import cache

from annotations.models import Study
from generation.models import FaceSet
from scoring.metrics.document import cached_for_study_data
from scoring.reflect import selectors as reflect_selectors
from scoring.reflect.reports import PAGE_RESAMPLES
from scoring.report import figures as report_figures
from scoring.report.bundle import report_from_inputs
from scoring.report.inputs import reflect_inputs, report_inputs
from scoring.report.render import render_report_html, render_report_pdf
from scoring.report.selectors import study_audit_context


def report_document(*, study: Study, references: dict | None = None, **options) -> dict:
    """The audit report of a study, recomputed from its stored records through the same
    inputs a report folder holds (``report_inputs``; docs/report.md, "Verifying a report")."""
    return report_from_inputs(report_inputs(study=study, references=references, **options))


def report_document_cached(
    *, study: Study, references: dict | None = None, fingerprint: str | None = None, **options
) -> dict:
    """The same report, reused while the study's data (its fingerprint) and the settings are unchanged."""
    return cached_for_study_data(
        "report",
        study=study,
        fingerprint=fingerprint,
        settings=report_settings(study=study, references=references, **options),
        compute=lambda: report_document(study=study, references=references, **options),
    )


def report_settings(*, study: Study, references: dict | None = None, **options) -> list:
    """The cache settings of a report document (the page's default: no references, no options)."""
    # The staff-stated context is no data the fingerprint sees: an edit must refresh the report.
    return [references or {}, options, study_audit_context(study=study)]


def figure_image_cached(
    *, study: Study, report: dict, spec: dict, fmt: str, references: dict
) -> bytes:
    """A figure's bytes, drawn once per report (matplotlib takes a few hundred ms a figure)."""
    return cached_for_study_data(
        "report-figure",
        study=study,
        settings=[references or {}, {"figure": spec["key"], "fmt": fmt}],
        compute=lambda: report_figures.figure_image(report, spec, fmt),
    )


def report_pdf_cached(
    *, study: Study, references: dict | None = None, fingerprint: str | None = None
) -> bytes:
    """The report's PDF, printed once per state of the data (Chromium takes seconds a document)."""
    return cached_for_study_data(
        "report-pdf",
        study=study,
        fingerprint=fingerprint,
        settings=report_settings(study=study, references=references),
        compute=lambda: render_report_pdf(
            report_document_cached(study=study, references=references, fingerprint=fingerprint)
        ),
    )


def audit_document_cached(*, face_set: FaceSet) -> dict[str, Any]:
    """The set's audit report document — the one ``reflect_report`` writes (summary, legal
    mapping, figures; docs/report.md) — with the page's bootstrap size, computed once per
    state of its answers."""
    return cache.get_or_set(
        _audit_cache_key("document", face_set),
        lambda: report_from_inputs(
            {"reflect": reflect_inputs(face_set=face_set, n_resamples=PAGE_RESAMPLES, seed=0)}
        ),
        timeout=None,
    )


def audit_file_cached(*, face_set: FaceSet, fmt: str) -> bytes:
    """The audit report document as self-contained HTML or as PDF (printed by headless
    Chromium: ``PdfRendererMissing`` when there is none), rendered once per state of the
    answers."""

    def rendered() -> bytes:
        document = audit_document_cached(face_set=face_set)
        if fmt == "pdf":
            return render_report_pdf(document)
        return render_report_html(document).encode("utf-8")

    return cache.get_or_set(
        audit_file_cache_key(face_set=face_set, fmt=fmt), rendered, timeout=None
    )


def audit_file_cache_key(*, face_set: FaceSet, fmt: str) -> str:
    """Where ``audit_file_cached`` keeps the file for today's answers."""
    return _audit_cache_key(fmt, face_set)


def _audit_cache_key(kind: str, face_set: FaceSet) -> str:
    fingerprint = reflect_selectors.answers_fingerprint(face_set=face_set)
    return f"reflect-audit-{kind}:{face_set.pk}:{fingerprint}:{PAGE_RESAMPLES}"

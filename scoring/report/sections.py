"""The report's numbered sections in page order: the one list the table of contents, the
template context and the figure list read (Django-free; docs/architecture.md, "a report
section"). A section is numbered by its position among the sections its report has, so the
optional ones, placed last, are numbered after the others."""

from __future__ import annotations

from scoring.report import legal, safety, side_by_side, study_sections
from scoring.report.document_types import is_audit_report
from scoring.report.reflect import display as reflect_display
from scoring.report.report_section import ReportSection

STUDY_REPORT: list[ReportSection] = [
    legal.SECTION,
    study_sections.DESIGN,
    study_sections.MEASURES,
    study_sections.DISPARITIES,
    study_sections.EQUIVALENCE,
    study_sections.REGRESSION,
    safety.SECTION,
    study_sections.VALIDATION,
    study_sections.PPI,
    study_sections.LIMITATIONS,
    study_sections.PROVENANCE,
    # Only when the data call for them: several generators, then a REFLECT part.
    side_by_side.SECTION,
    reflect_display.SECTION,
]
# A REFLECT-only document (``reflect_report``; templates/staff/report_reflect.html).
REFLECT_REPORT: list[ReportSection] = [
    legal.SECTION,
    reflect_display.SECTION,
    study_sections.REFLECT_PROVENANCE,
]


def present_sections(report: dict) -> list[ReportSection]:
    """The sections this report has, in page order."""
    registry = STUDY_REPORT if is_audit_report(report) else REFLECT_REPORT
    return [section for section in registry if section.present(report)]

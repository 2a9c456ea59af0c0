"""The report documents' top level as types: what ``report.json`` and the study export hold.

``AuditReport``, ``ReflectReport`` and ``StudyMetrics`` name every top-level key of the
documents, required (``Required``) as in their JSON Schemas (``scoring/report/schema.py``) or
optional; ``tests/scoring/report/test_schema.py`` fails when a type and its schema disagree. The
builders annotate what they return with these types (``dataset.audit_report``,
``bundle.reflect_document``, ``scoring.metrics.document.metrics_document``), so a reader may index a
required key (``report["rates"]``) and test an optional one (``"people" in report``) instead of
reading through ``.get("x", {})`` chains that fail silently when a key moves. Nested sections
keep their dict shapes here: the schema's ``$defs`` describe them (docs/report.md, "The report
document"). No Django.
"""

# No `from __future__ import annotations`: TypedDict reads Required[...] at run time to list
# its required keys (__required_keys__), which the schema test compares.
from typing import Any, Literal, Required, TypedDict

Section = dict[str, Any]
Rows = list[dict[str, Any]]


class Provenance(TypedDict, total=False):
    generated_at: Required[str]
    seed: int | None
    n_resamples: int | None
    n_permutations: int | None
    confidence: float | None
    software: Required[dict[str, str]]
    data_fingerprint: str | None
    definitions: Required[list[str]]


class TextRow(TypedDict):
    kind: str
    text: str


class _Extensions(TypedDict, total=False):
    """Sections other analyses add (optional, typed in the schema's ``$defs``)."""

    ppi: Section
    judge_error: Section
    frontier: Section
    intent_interaction: Section


class AuditReport(_Extensions, total=False):
    """``acrb-audit-report/1``: a study's report (with a REFLECT part under ``reflect``)."""

    schema: Required[Literal["acrb-audit-report/1"]]
    study: Required[Section]
    settings: Required[Section]
    design: Required[Section]
    rates: Required[Section]
    agreement: Required[Section]
    counts: Required[Section]
    clusters: Required[Section]
    methods: Required[dict[str, str]]
    disparities: Required[Rows]
    regression: Required[Rows]
    intent_interaction_tables: Rows
    models_side_by_side: Section
    validation: Required[Section]
    provenance: Required[Provenance]
    limitations: Required[list[TextRow]]
    article_10: Required[Rows]
    # Added by bundle.report_from_inputs (the folder, the page, the command):
    people: Section
    data_statement: Section
    reflect: Section
    legal: Section
    kind: str


class ReflectReport(_Extensions, total=False):
    """``acrb-reflect-report/1``: a REFLECT-only document."""

    schema: Required[Literal["acrb-reflect-report/1"]]
    kind: Required[Literal["reflect"]]
    provenance: Required[Provenance]
    reflect: Required[Section]
    legal: Section


class StudyMetrics(_Extensions, total=False):
    """``acrb-study-metrics/1``: the study export (``export_metrics``, the metrics API)."""

    schema: Required[Literal["acrb-study-metrics/1"]]
    meta: Required[Section]
    rates: Required[Section]
    rates_by: Required[Section]
    agreement: Required[Section]
    aggregation: Section
    sensitivity: Section
    study: Section
    counts: Section
    labels: Section
    excluded_items: Rows
    gold_accuracy: Rows
    generated_at: str


class ModelComparison(TypedDict):
    """``acrb-model-comparison/1``: models side by side (``compare_models``, the comparison page)."""

    schema: Literal["acrb-model-comparison/1"]
    studies: Rows
    models_side_by_side: Section
    generated_at: str


Report = AuditReport | ReflectReport

__all__ = [
    "AuditReport",
    "ModelComparison",
    "Provenance",
    "ReflectReport",
    "Report",
    "StudyMetrics",
    "TextRow",
    "is_audit_report",
]


def is_audit_report(report: Report) -> bool:
    """A study's report, not a REFLECT-only document: ``study`` is required in the one and absent
    from the other (legal.py tells the parts apart the same way)."""
    return "study" in report

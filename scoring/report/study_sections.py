"""The study report's sections whose strings all come from ``study_tables.display_report`` (the
template's ``display``), and their figures (Django-free; the registry: ``sections.py``)."""

from __future__ import annotations

from scoring.report import charts
from scoring.report.display import confidence_label
from scoring.report.report_section import ReportSection, figure_spec


def disparity_figures(report: dict) -> list[dict]:
    """Per source: its rates per attribute value, then Δ per measure × attribute type."""
    out = []
    for source in sorted(report["rates"]):
        for measure in charts.MEASURES:
            if report["rates"][source].get(measure):
                title = f"{measure} rate by value — {source}"
                out.append(figure_spec("rates", source, measure, title))
        if any(row["source"] == source for row in report["disparities"]):
            title = f"Δ and max/min ratio with {confidence_label(report)} CI — {source}"
            out.append(figure_spec("delta", source, "all", title))
    return out


def regression_figures(report: dict) -> list[dict]:
    """Per source × outcome with a regression table: its odds ratios."""
    out = []
    for source in sorted(report["rates"]):
        for outcome in ("refusal", "erasure"):
            if any(t["source"] == source and t["outcome"] == outcome for t in report["regression"]):
                title = f"odds ratios of {outcome} — {source}"
                out.append(figure_spec("odds", source, outcome, title))
    return out


DESIGN = ReportSection(
    id="design",
    title="Study design and data sources",
    templates=("staff/partials/report_design.html", "staff/partials/report_people.html"),
)
MEASURES = ReportSection(
    id="measures",
    title="Examination method and measures",
    templates=("staff/partials/report_measures.html",),
)
DISPARITIES = ReportSection(
    id="disparities",
    title="Detected biases: disparities",
    templates=("staff/partials/report_disparities.html",),
    figures=disparity_figures,
)
EQUIVALENCE = ReportSection(
    id="equivalence",
    title="Equivalence within δ: what can be claimed",
    templates=("staff/partials/report_equivalence.html",),
    present=lambda report: bool(report.get("equivalence")),
)
REGRESSION = ReportSection(
    id="regression",
    title="Regression",
    heading="Regression: refusal and erasure on attribute value + domain + generator",
    templates=("staff/partials/report_regression_section.html",),
    figures=regression_figures,
)
VALIDATION = ReportSection(
    id="validation",
    title="Human validation",
    templates=("staff/partials/report_validation.html",),
)
PPI = ReportSection(
    id="ppi",
    title="Judges and humans combined: prediction-powered estimates and judge fairness",
    templates=("staff/partials/report_ppi.html",),
)
LIMITATIONS = ReportSection(
    id="limitations",
    title="Stated limitations and data gaps",
    templates=("staff/partials/report_limitations.html",),
)
PROVENANCE = ReportSection(
    id="provenance",
    title="Provenance",
    templates=("staff/partials/report_provenance.html",),
)
# A REFLECT-only document's provenance: the answers, no study records.
REFLECT_PROVENANCE = ReportSection(
    id="provenance",
    title="Provenance",
    templates=("staff/partials/report_reflect_provenance.html",),
)

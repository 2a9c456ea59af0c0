"""Figures of the audit report and the rows behind each (Django-free; docs/report.md).

Three kinds, all drawn from the report dict: rates per attribute value with Wilson intervals
(``scoring.report.charts.rates_bar_chart``, the dashboard's chart), Δ per measure × attribute type with
its bootstrap CI (one per source), and odds ratios with CIs from both regression variants (one
per source × outcome). Every figure's data is a list of rows the CSV download writes as is.
"""

from __future__ import annotations

from scoring.report import charts, plotting, safety
from scoring.report.display import confidence_label
from scoring.report.document_types import fit_coefficients
from scoring.report.figures import forest, frontier
from scoring.report.reflect import figures as reflect_figures
from scoring.report.sections import present_sections

DELTA_COLUMNS = [
    "source",
    "measure",
    "attribute",
    "delta",
    "delta_ci_low",
    "delta_ci_high",
    "max_value",
    "min_value",
    "delta_p",
    "delta_p_holm",
    "flagged",
    "n",
]
ODDS_COLUMNS = [
    "source",
    "outcome",
    "attribute",
    "reference",
    "value",
    "method",
    "beta",
    "standard_error",
    "odds_ratio",
    "ci_low",
    "ci_high",
    "p_value",
    "reason",
]


def figure_list(report: dict) -> list[dict]:
    """Every figure of the report, its sections' in page order (``sections.py``): ``key``
    (URL-safe name), ``title``, ``kind`` and parameters (``report_section.figure_spec``)."""
    return [spec for section in present_sections(report) for spec in section.figures(report)]


def figure_spec(report: dict, key: str) -> dict | None:
    return next((spec for spec in figure_list(report) if spec["key"] == key), None)


def figure_rows(report: dict, spec: dict) -> tuple[list[dict], list[str]]:
    """The rows a figure draws, and their CSV columns."""
    if spec["kind"].startswith("reflect_"):
        return reflect_figures.figure_rows(report["reflect"], spec)
    if spec["kind"] == "frontier":
        rows = safety.frontier_rows(report, source=spec["source"])
        return rows, safety.FRONTIER_COLUMNS
    if spec["kind"] == "rates":
        rows = charts.rate_rows(report, source=spec["source"], measure=spec["detail"])
        return rows, charts.RATE_COLUMNS
    if spec["kind"] == "delta":
        rows = [r for r in report["disparities"] if r["source"] == spec["source"]]
        return [{c: r.get(c) for c in DELTA_COLUMNS} for r in rows], DELTA_COLUMNS
    return odds_rows(report, source=spec["source"], outcome=spec["detail"]), ODDS_COLUMNS


def odds_rows(report: dict, *, source: str, outcome: str) -> list[dict]:
    rows = []
    for table in report["regression"]:
        if table["source"] != source or table["outcome"] != outcome:
            continue
        for method in ("cluster", "gee"):
            fit = table[method]
            base = {
                "source": source,
                "outcome": outcome,
                "attribute": table["attribute"],
                "reference": table["reference"],
                "method": method,
            }
            if not fit.get("fitted"):
                rows.append({**base, "value": None, "reason": fit.get("reason")})
            for value, coefficient in sorted(fit_coefficients(fit).items()):
                rows.append({**base, "value": value, **coefficient})
    return rows


def figure_image(report: dict, spec: dict, fmt: str = "svg") -> bytes:
    """The figure as SVG or PNG bytes; SVG text stays text, so inlined figures share no glyph ids."""
    with plotting.figure_rc({"svg.fonttype": "none", "svg.hashsalt": spec["key"]}):
        return _draw(report, spec, fmt)


def _draw(report: dict, spec: dict, fmt: str) -> bytes:
    if spec["kind"].startswith("reflect_"):
        return reflect_figures.figure_image(report["reflect"], spec, fmt)
    if spec["kind"] == "frontier":
        return frontier.frontier_image(report, spec, fmt)
    if spec["kind"] == "rates":
        return charts.rates_bar_chart(
            report, source=spec["source"], measure=spec["detail"], fmt=fmt
        )
    rows, _ = figure_rows(report, spec)
    if spec["kind"] == "delta":
        return forest.delta_and_ratio(
            [r for r in report["disparities"] if r["source"] == spec["source"]],
            spec["title"],
            fmt,
            level=confidence_label(report),
        )
    return forest.odds(report, rows, spec, fmt)


def inline_svg(image: bytes) -> str:
    """An SVG document as markup to place inside HTML (without its XML prologue)."""
    text = image.decode("utf-8")
    start = text.find("<svg")
    return text[start:] if start >= 0 else text

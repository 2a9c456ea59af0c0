"""The study audit report as HTML and JSON: the template context, the self-contained file of
the ``audit_report`` command, and the JSON text (docs/report.md)."""

from __future__ import annotations

import json

from django.contrib.staticfiles import finders
from django.template.loader import render_to_string

from scoring.report import figures as report_figures
from scoring.report.display import display_report


def _report_css() -> str:
    path = finders.find("css/report.css")
    return open(path, encoding="utf-8").read() if path else ""


def report_context(report: dict, *, standalone: bool, figure_url=None) -> dict:
    """Template context: the report, its display strings and its figures.

    ``standalone`` (the file export) inlines every figure as SVG; the page links each figure's
    SVG through ``figure_url(key, fmt)`` so it loads in parallel and stays downloadable.
    """
    figures = []
    for spec in report_figures.figure_list(report):
        figure = dict(spec)
        if standalone:
            svg = report_figures.figure_image(report, spec, "svg")
            figure["svg"] = report_figures.inline_svg(svg)
        else:
            figure["urls"] = {fmt: figure_url(spec["key"], fmt) for fmt in ("svg", "png", "csv")}
        figures.append(figure)
    return {"report": report, "display": display_report(report), "figures": figures,
            "standalone": standalone, "report_css": _report_css()}  # fmt: skip


def render_report_html(report: dict) -> str:
    """The self-contained HTML file of the ``audit_report`` command."""
    return render_to_string("staff/report.html", report_context(report, standalone=True))


def render_report_json(report: dict) -> str:
    return json.dumps(report, indent=2, allow_nan=False, ensure_ascii=False)

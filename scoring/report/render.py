"""The study audit report as HTML and JSON: the template context, the self-contained file of
the ``audit_report`` command, and the JSON text (docs/report.md)."""

from __future__ import annotations

import json

from django.contrib.staticfiles import finders
from django.template.loader import render_to_string

from scoring.report import figures as report_figures
from scoring.report.display import display_report
from scoring.report.summary import executive_summary

# The report's numbered sections in page order (id, title): the table of contents. A new section
# adds its entry here and its <h2 id="..."> block in templates/staff/report.html.
REPORT_SECTIONS = [
    ("evidence", "1. Legal mapping"),
    ("design", "2. Study design and data sources"),
    ("measures", "3. Examination method and measures"),
    ("disparities", "4. Detected biases: disparities"),
    ("regression", "5. Regression"),
    ("validation", "6. Human validation"),
    ("limitations", "7. Stated limitations and data gaps"),
    ("provenance", "8. Provenance"),
]


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
    sections = [{"id": "summary", "title": "Executive summary"}] + [
        {"id": key, "title": title} for key, title in REPORT_SECTIONS
    ]
    return {"report": report, "display": display_report(report), "figures": figures,
            "summary": executive_summary(report), "sections": sections,
            "standalone": standalone, "report_css": _report_css()}  # fmt: skip


def render_report_html(report: dict) -> str:
    """The self-contained HTML file of the ``audit_report`` command."""
    return render_to_string("staff/report.html", report_context(report, standalone=True))


def render_report_json(report: dict) -> str:
    return json.dumps(report, indent=2, allow_nan=False, ensure_ascii=False)


def render_report_pdf(report: dict) -> bytes:
    """The same self-contained document printed to PDF (``scoring.report.pdf``)."""
    from scoring.report.pdf import html_to_pdf

    title = f"Bias audit report · {report['study'].get('name', '')}"
    return html_to_pdf(render_report_html(report), title=title)

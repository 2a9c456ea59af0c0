"""The audit report as HTML and JSON: the template context, the self-contained file of the
``audit_report`` and ``reflect_report`` commands, and the JSON text (docs/report.md). One
document: a study's report, a REFLECT-only report, or a study's with a REFLECT part."""

from __future__ import annotations

import json

from django.contrib.staticfiles import finders
from django.template.loader import render_to_string

from scoring.report import figures as report_figures
from scoring.report import pdf
from scoring.report.display import confidence_label
from scoring.report.document_types import is_audit_report
from scoring.report.executive_summary import executive_summary
from scoring.report.sections import present_sections
from scoring.report.study_tables import display_report


def numbered_sections(report: dict) -> list[dict]:
    """The sections this report has (``sections.py``), numbered in page order: ``id``,
    ``title`` (the table of contents), ``heading`` (its ``<h2>``) and ``templates``."""
    return [
        {
            "id": section.id,
            "title": f"{number}. {section.title}",
            "heading": f"{number}. {section.heading or section.title}",
            "templates": section.templates,
        }
        for number, section in enumerate(present_sections(report), start=1)
    ]


def report_template(report: dict) -> str:
    return "staff/report_reflect.html" if report.get("kind") == "reflect" else "staff/report.html"


def report_title(report: dict) -> str:
    if report.get("kind") == "reflect":
        return f"REFLECT audit report · {report['reflect']['face_set']['name']}"
    return f"Bias audit report · {report['study'].get('name', '')}"


def _report_css() -> str:
    path = finders.find("css/report.css")
    return open(path, encoding="utf-8").read() if path else ""


def report_context(
    report: dict, *, standalone: bool, figure_url=None, with_figures: bool = True
) -> dict:
    """Template context: the report, its display strings and its figures.

    ``standalone`` (the file export) inlines every figure as SVG; the page links each figure's
    SVG through ``figure_url(key, fmt)`` so it loads in parallel and stays downloadable.
    ``with_figures=False`` leaves the figures out (``reflect_report --no-figures``).
    """
    figures = []
    for spec in report_figures.figure_list(report) if with_figures else []:
        figure = dict(spec)
        if standalone:
            svg = report_figures.figure_image(report, spec, "svg")
            figure["svg"] = report_figures.inline_svg(svg)
        else:
            figure["urls"] = {fmt: figure_url(spec["key"], fmt) for fmt in ("svg", "png", "csv")}
        figures.append(figure)
    numbered = numbered_sections(report)
    context = {
        "report": report,
        # The "95%" of every "[95% CI]" label: the level the document was computed at.
        "level": confidence_label(report if is_audit_report(report) else report["reflect"]),
        "figures": figures,
        "summary": executive_summary(report),
        "display": display_report(report) if is_audit_report(report) else {},
        "report_sections": numbered,
        "section_titles": {section["id"]: section["title"] for section in numbered},
        "with_figures": with_figures,
        "title": report_title(report),
        "sections": [{"id": "summary", "title": "Executive summary"}] + numbered,
        "standalone": standalone,
        "report_css": _report_css(),
    }
    for section in present_sections(report):
        context.update(section.context(report))
    return context


def render_report_html(report: dict, *, with_figures: bool = True) -> str:
    """The self-contained HTML file of the ``audit_report`` and ``reflect_report`` commands."""
    context = report_context(report, standalone=True, with_figures=with_figures)
    return render_to_string(report_template(report), context)


def render_report_json(report: dict) -> str:
    return json.dumps(report, indent=2, allow_nan=False, ensure_ascii=False)


def render_report_pdf(report: dict, *, with_figures: bool = True) -> bytes:
    """The same self-contained document printed to PDF (``scoring.report.pdf``)."""
    html = render_report_html(report, with_figures=with_figures)
    return pdf.html_to_pdf(html, title=report_title(report))

"""The audit report as HTML and JSON: the template context, the self-contained file of the
``audit_report`` and ``reflect_report`` commands, and the JSON text (docs/report.md). One
document: a study's report, a REFLECT-only report, or a study's with a REFLECT part."""

from __future__ import annotations

import json

from django.contrib.staticfiles import finders
from django.template.loader import render_to_string

from scoring.report import figures as report_figures
from scoring.report import pdf
from scoring.report.display import display_report
from scoring.report.executive_summary import executive_summary
from scoring.report.reflect.display import display_part
from scoring.report.safety import safety_display
from scoring.report.side_by_side import side_by_side_display

# The report's numbered sections in page order (id, title): the table of contents. A new section
# adds its entry here and its <h2 id="..."> block in templates/staff/report.html.
REPORT_SECTIONS = [
    ("evidence", "1. Legal mapping"),
    ("design", "2. Study design and data sources"),
    ("measures", "3. Examination method and measures"),
    ("disparities", "4. Detected biases: disparities"),
    ("regression", "5. Regression"),
    ("safety", "6. Safety–utility trade-off by attribute"),
    ("validation", "7. Human validation"),
    ("ppi", "8. Judges and humans combined: prediction-powered estimates and judge fairness"),
    ("limitations", "9. Stated limitations and data gaps"),
    ("provenance", "10. Provenance"),
]
# Sections a report has only when its data call for them, numbered after the others in this
# order: several generators side by side, then a REFLECT part. A REFLECT-only document has
# REFLECT_SECTIONS (templates/staff/report_reflect.html).
OPTIONAL_SECTIONS = [
    ("models_side_by_side", "models", "Models side by side"),
    ("reflect", "reflect", "REFLECT: decision tasks on face images"),
]
REFLECT_SECTIONS = [
    ("evidence", "1. Legal mapping"),
    ("reflect", "2. REFLECT: decision tasks on face images"),
    ("provenance", "3. Provenance"),
]


def report_sections(report: dict) -> list[tuple[str, str]]:
    if report.get("kind") == "reflect":
        return REFLECT_SECTIONS
    present = [(key, title) for part, key, title in OPTIONAL_SECTIONS if part in report]
    return REPORT_SECTIONS + [
        (key, f"{len(REPORT_SECTIONS) + number}. {title}")
        for number, (key, title) in enumerate(present, start=1)
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
    sections = [{"id": "summary", "title": "Executive summary"}] + [
        {"id": key, "title": title} for key, title in report_sections(report)
    ]
    return {
        "report": report,
        "figures": figures,
        "summary": executive_summary(report),
        "display": display_report(report) if "study" in report else {},
        "safety": safety_display(report) if "study" in report else None,
        "reflect": display_part(report["reflect"]) if "reflect" in report else None,
        "reflect_section": dict(report_sections(report))["reflect"] if "reflect" in report else "",
        "models_section": dict(report_sections(report)).get("models", ""),
        "models": side_by_side_display(report["models_side_by_side"])
        if "models_side_by_side" in report
        else [],
        "with_figures": with_figures,
        "title": report_title(report),
        "sections": sections,
        "standalone": standalone,
        "report_css": _report_css(),
    }


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

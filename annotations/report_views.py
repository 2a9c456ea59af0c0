"""The audit report of a study: the design read from the database, the page, its figures and
the dashboard's disparities fragment (docs/report.md).

The numbers come from ``scoring.report.audit_report`` on the frames ``selectors`` builds; this
module only reads the design, caches the report while the study's data is unchanged, and
renders it. The ``audit_report`` command writes the same report to files.
"""

from __future__ import annotations

import hashlib
import json

from django.contrib.staticfiles import finders
from django.core.cache import cache
from django.db.models import Count, Q
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_GET

from scoring import report_figures
from scoring.report import audit_report
from scoring.report_format import disparity_summary, display_report

from . import exports, selectors
from .models import AttributeValue, AutomatedJudgment, Item, Study
from .staff_views import staff_required

CACHE_SECONDS = 24 * 3600


# --- design (reads) -------------------------------------------------------------------------


def study_design(*, study: Study) -> dict:
    """Taxonomy, prompts, generators and judges of a study, in four queries."""
    taxonomy = [
        {"attribute": row["attribute"], "value": row["value"], "cue_description": row["cue_description"],
         "is_neutral": row["is_neutral"], "n_items": row["n_items"]}
        for row in AttributeValue.objects.filter(study=study)
        .annotate(
            n_items=Count("items", filter=Q(items__is_gold=False, items__excluded_at__isnull=True))
        )
        .values("attribute", "value", "cue_description", "is_neutral", "n_items")
        .order_by("attribute", "value")
    ]  # fmt: skip
    items = Item.objects.included().filter(study=study, is_gold=False)
    prompts = list(
        items.values("base_prompt_id", "domain")
        .annotate(n_items=Count("id"))
        .order_by("domain", "base_prompt_id")
    )
    domains: dict[str, dict] = {}
    for row in prompts:
        entry = domains.setdefault(
            row["domain"], {"domain": row["domain"], "n_base_prompts": 0, "n_items": 0}
        )
        entry["n_base_prompts"] += 1
        entry["n_items"] += row["n_items"]
    generators = list(
        items.values("generator", "mode")
        .annotate(n_items=Count("id"))
        .order_by("generator", "mode")
    )
    judges = list(
        AutomatedJudgment.objects.filter(
            selectors.INCLUDED_JUDGMENTS, item__study=study, item__is_gold=False
        )
        .values("judge", "judge_version")
        .annotate(
            n_judgments=Count("id", filter=Q(error="")), n_errors=Count("id", filter=~Q(error=""))
        )
        .order_by("judge", "judge_version")
    )
    return {"taxonomy": taxonomy, "domains": list(domains.values()), "prompts": prompts,
            "generators": generators, "judges": judges}  # fmt: skip


def study_facts(*, study: Study) -> dict:
    return {"slug": study.slug, "name": study.name, "mode": study.mode, "overlap_k": study.overlap_k,
            "description": study.description, "synthetic_demo": study.is_synthetic_demo}  # fmt: skip


# --- the report (dataset) -------------------------------------------------------------------


def report_document(*, study: Study, references: dict | None = None, **options) -> dict:
    """The audit report of a study, recomputed from its stored records."""
    annotations, judgments = selectors.study_metric_frames(study=study)
    return audit_report(
        annotations,
        judgments,
        study=study_facts(study=study),
        design=study_design(study=study),
        gold_accuracy=selectors.gold_accuracy(study=study),
        references=references,
        data_fingerprint=selectors.study_data_fingerprint(study=study),
        **options,
    )


def _cache_key(prefix: str, study: Study, references, options) -> str:
    fingerprint = selectors.study_data_fingerprint(study=study)
    settings_text = json.dumps([references or {}, options], sort_keys=True)
    return prefix + hashlib.sha256(f"{study.pk}|{fingerprint}|{settings_text}".encode()).hexdigest()


def report_document_cached(*, study: Study, references: dict | None = None, **options) -> dict:
    """The same report, reused while the study's data (its fingerprint) and the settings are unchanged."""
    key = _cache_key("report:", study, references, options)
    report = cache.get(key)
    if report is None:
        report = report_document(study=study, references=references, **options)
        cache.set(key, report, timeout=CACHE_SECONDS)
    return report


def figure_image_cached(
    *, study: Study, report: dict, spec: dict, fmt: str, references: dict
) -> bytes:
    """A figure's bytes, drawn once per report (matplotlib takes a few hundred ms a figure)."""
    key = _cache_key("report-figure:", study, references, {"figure": spec["key"], "fmt": fmt})
    image = cache.get(key)
    if image is None:
        image = report_figures.figure_image(report, spec, fmt)
        cache.set(key, image, timeout=CACHE_SECONDS)
    return image


# --- formatting -----------------------------------------------------------------------------


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


# --- views ----------------------------------------------------------------------------------


def _references(request) -> dict:
    """``?reference=culture:US&reference=gender:female`` picks regression reference values."""
    pairs = (text.split(":", 1) for text in request.GET.getlist("reference") if ":" in text)
    return {attribute: value for attribute, value in pairs if attribute and value}


@staff_required
@require_GET
def study_report(request, slug: str):
    study = get_object_or_404(Study, slug=slug)
    references = _references(request)
    report = report_document_cached(study=study, references=references)
    query = request.GET.urlencode()

    def figure_url(key, fmt):
        url = reverse("report:study_report_figure", args=[study.slug, key, fmt])
        return f"{url}?{query}" if query else url

    context = report_context(report, standalone=False, figure_url=figure_url)
    context["study"] = study
    return render(request, "staff/report.html", context)


@staff_required
@require_GET
def study_report_json(request, slug: str):
    study = get_object_or_404(Study, slug=slug)
    report = report_document_cached(study=study, references=_references(request))
    response = HttpResponse(render_report_json(report), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-report.json"'
    return response


@staff_required
@require_GET
def study_report_figure(request, slug: str, key: str, fmt: str):
    study = get_object_or_404(Study, slug=slug)
    if fmt not in ("svg", "png", "csv"):
        raise Http404("no such figure format")
    report = report_document_cached(study=study, references=_references(request))
    spec = report_figures.figure_spec(report, key)
    if spec is None:
        raise Http404("no such figure")
    filename = f"{study.slug}-{key.replace(':', '_').replace('@', '_')}.{fmt}"
    if fmt == "csv":
        rows, columns = report_figures.figure_rows(report, spec)
        response = HttpResponse(exports.render_rows_csv(rows, columns), content_type="text/csv")
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response
    image = figure_image_cached(
        study=study, report=report, spec=spec, fmt=fmt, references=_references(request)
    )
    response = HttpResponse(image, content_type="image/svg+xml" if fmt == "svg" else "image/png")
    if request.GET.get("download"):
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@staff_required
@require_GET
def study_disparities(request, slug: str):
    """The dashboard's compact disparities table (an htmx fragment; a full page without htmx)."""
    study = get_object_or_404(Study, slug=slug)
    report = report_document_cached(study=study)
    context = {"study": study, "summary": disparity_summary(report), "alpha": report["settings"]["alpha"],
               "n_permutations": report["settings"]["n_permutations"]}  # fmt: skip
    return render(request, "staff/partials/disparities.html#table", context)

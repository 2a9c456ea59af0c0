"""The study audit report's pages: the report, its JSON, its figures and the dashboard's
disparities fragment (docs/report.md). Thin: read through ``selectors``, format through
``render``."""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from annotations.common.permissions import staff_required
from annotations.exports import writers as exports
from annotations.models import Study
from scoring.metrics.headlines import human_first
from scoring.report import figures as report_figures
from scoring.report import tasks
from scoring.report.display import DELTA_TEST, confidence_label, delta_families
from scoring.report.documents import figure_image_cached, report_document_cached
from scoring.report.render import render_report_json, report_context
from scoring.report.safety import safety_display
from scoring.report.study_tables import disparity_summary, summary_table
from scoring.report.waiting import computing_response, file_response_or_wait


def _references(request) -> dict:
    """``?reference=culture:US&reference=gender:female`` picks regression reference values."""
    pairs = (text.split(":", 1) for text in request.GET.getlist("reference") if ":" in text)
    return {attribute: value for attribute, value in pairs if attribute and value}


@staff_required
@require_GET
def study_report(request, slug: str):
    study = get_object_or_404(Study, slug=slug)
    references = _references(request)
    documents = None
    if references:  # other reference values than the page's: computed for this request
        report = report_document_cached(study=study, references=references)
    else:
        documents = tasks.page_documents(study=study)
        if not documents.ready:
            return computing_response(
                request, study=study, documents=documents, target="report", what="the audit report"
            )
        report = documents.report
    query = request.GET.urlencode()

    def figure_url(key, fmt):
        url = reverse("report:study_report_figure", args=[study.slug, key, fmt])
        return f"{url}?{query}" if query else url

    context = report_context(report, standalone=False, figure_url=figure_url)
    context.update(study=study, freshness=documents, freshness_target=None)
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
def study_report_pdf(request, slug: str):
    """The report as PDF, printed from the self-contained HTML by headless Chromium in the
    background: a page that waits for it until it is made (``waiting``)."""
    study = get_object_or_404(Study, slug=slug)
    state = tasks.report_pdf(study=study, references=_references(request))
    return file_response_or_wait(
        request,
        state,
        filename=f"{study.slug}-report.pdf",
        content_type="application/pdf",
        what="The audit report's PDF",
    )


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
    """The dashboard's disparities table, human rows first (an htmx fragment; a full page without
    htmx)."""
    study = get_object_or_404(Study, slug=slug)
    documents = tasks.page_documents(study=study)
    if not documents.ready:
        return computing_response(
            request, study=study, documents=documents, target="disparities", what="the Δ tests"
        )
    report = documents.report
    table = summary_table(human_first(disparity_summary(report)))
    context = {
        "freshness": documents,
        "freshness_target": "disparities",
        "study": study,
        "summary": table["rows"],
        "notes": table["notes"],
        "alpha": report["settings"]["alpha"],
        "level": confidence_label(report),
        "delta_test": DELTA_TEST,
        "family": delta_families(report["disparities"]),
    }
    # The study page swaps in the fragment; a link or a reload gets the page around it.
    template = "staff/partials/disparities.html#table" if request.htmx else "staff/disparities.html"
    return render(request, template, context)


@staff_required
@require_GET
def study_safety(request, slug: str):
    """The study page's "Safety–utility trade-off by attribute" (an htmx fragment; a full page
    without htmx): the report's section, its frontier figures linked, not inlined."""
    study = get_object_or_404(Study, slug=slug)
    documents = tasks.page_documents(study=study)
    if not documents.ready:
        return computing_response(
            request,
            study=study,
            documents=documents,
            target="safety",
            what="the safety–utility trade-off",
        )
    report = documents.report
    figures = [
        {
            **spec,
            "urls": {
                fmt: reverse("report:study_report_figure", args=[study.slug, spec["key"], fmt])
                for fmt in ("svg", "png", "csv")
            },
        }
        for spec in report_figures.figure_list(report)
        if spec["kind"] == "frontier"
    ]
    context = {
        "study": study,
        "safety": safety_display(report),
        "figures": figures,
        "freshness": documents,
        "freshness_target": "safety",
    }
    template = "staff/partials/safety.html#section" if request.htmx else "staff/safety.html"
    return render(request, template, context)

"""A study's validated metrics on the web: the staff statistics fragment of the study page, the
rate charts, the metrics download and the metrics API (docs/metrics.md).

Thin: authenticate, validate, read ``scoring.metrics.document``, render.
"""

from __future__ import annotations

from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from annotations.common.http import download_response
from annotations.common.permissions import staff_required
from annotations.exports.writers import render_metrics, render_rows_csv
from annotations.models import Study
from annotations.policies import PolicyError
from scoring.forms import BatchPlanForm
from scoring.metrics import document as study_metrics
from scoring.metrics.headlines import inter_annotator_rows, validation_display_rows
from scoring.metrics.selectors import study_summary as study_summary_data
from scoring.planning import batch_plan as plan_for
from scoring.report import charts
from scoring.report import tasks as report_tasks
from scoring.report.display import confidence_label
from scoring.report.ppi_tables import display_ppi
from scoring.report.waiting import computing_response


@staff_required
@require_GET
def study_statistics(request, slug: str):
    """Validation tables, rate charts and gold accuracy: a fragment the study page loads by htmx
    (a full page without htmx)."""
    study = get_object_or_404(Study, slug=slug)
    labels = request.GET.get("labels", study_metrics.POOLED)
    if labels not in study_metrics.LABEL_SOURCES:
        return _unknown_labels(labels)
    documents = None
    if labels == study_metrics.POOLED:  # the page's default: computed in the background
        documents = report_tasks.page_documents(study=study)
        if not documents.ready:
            return computing_response(
                request,
                study=study,
                documents=documents,
                target="statistics",
                what="agreement and rates",
            )
        metrics = documents.metrics
    else:
        metrics = study_metrics.metrics_document_cached(study=study, labels=labels)
    context = {
        "freshness": documents,
        "freshness_target": "statistics",
        "level": confidence_label(metrics),  # the "95%" of the "[95% CI]" headings
        "study": study,
        "labels": labels,
        "label_sources": study_metrics.LABEL_SOURCES,
        "metrics": metrics,
        "validation_rows": validation_display_rows(study_metrics.validation_table(metrics)),
        "inter_annotator": inter_annotator_rows(metrics),
        # Human labels first, then each judge (docs/annotation.md, "Staff pages").
        "rate_sources": sorted(metrics["rates"], key=lambda source: (source != "human", source)),
        "measures": charts.MEASURES,
        "ppi": display_ppi(metrics),
    }
    template = "scoring/study_statistics.html"
    return render(request, f"{template}#statistics" if request.htmx else template, context)


@staff_required
@require_GET
def study_summary(request, slug: str):
    """The summary at the top of the study page: progress, agreement headline, largest
    disparities and warnings (an htmx fragment; a full page without htmx)."""
    study = get_object_or_404(Study, slug=slug)
    documents = report_tasks.page_documents(study=study)
    if not documents.ready:
        return computing_response(
            request, study=study, documents=documents, target="summary", what="the summary"
        )
    summary = study_summary_data(study=study, metrics=documents.metrics, report=documents.report)
    context = {
        "study": study,
        "summary": summary,
        "level": confidence_label(documents.report),
        "freshness": documents,
        "freshness_target": "summary",
    }
    template = "scoring/study_summary.html"
    return render(request, f"{template}#summary" if request.htmx else template, context)


@staff_required
@require_GET
def study_judge_fairness(request, slug: str):
    """Each judge's PPI estimates and error by value (the judges page loads it by htmx; a page
    without htmx)."""
    study = get_object_or_404(Study, slug=slug)
    metrics = study_metrics.metrics_document_cached(study=study)
    context = {"study": study, "ppi": display_ppi(metrics)}
    template = "scoring/judge_fairness.html"
    return render(request, f"{template}#fairness" if request.htmx else template, context)


@staff_required
@require_GET
def batch_plan(request, slug: str):
    """The new-batch form's planning aid: expected widths of Δ's interval for a budget (an htmx
    fragment; without JavaScript the form submits here and gets a page)."""
    study = get_object_or_404(Study, slug=slug)
    form = BatchPlanForm(request.GET if "budget" in request.GET else None)
    plan, error = None, ""
    if form.is_bound and form.is_valid():
        data = form.cleaned_data
        try:
            plan = plan_for(
                study=study,
                budget=data["budget"],
                accuracy=data["accuracy"] or 0.9,
                rho=data["rho"],
                rate=data["rate"] or 0.5,
                min_per_value=data["min_per_value"],
            )
        except PolicyError as exc:
            error = str(exc)
    context = {"study": study, "form": form, "plan": plan, "error": error}
    template = "scoring/batch_plan.html"
    return render(request, f"{template}#plan" if request.htmx else template, context)


@staff_required
@require_GET
def rates_chart(request, slug: str, source: str, measure: str, fmt: str):
    study = get_object_or_404(Study, slug=slug)
    if fmt not in ("csv", "svg", "png") or measure not in charts.MEASURES:
        raise Http404("no such chart")
    metrics = study_metrics.metrics_document_cached(study=study)
    if source not in metrics["rates"]:
        raise Http404("no such rate source")
    filename = f"{study.slug}-{source}-{measure}.{fmt}"
    if fmt == "csv":
        rows = charts.rate_rows(metrics, source=source, measure=measure)
        return download_response(render_rows_csv(rows, charts.RATE_COLUMNS), filename, "text/csv")
    image = charts.rates_bar_chart(metrics, source=source, measure=measure, fmt=fmt)
    content_type = "image/svg+xml" if fmt == "svg" else "image/png"
    if request.GET.get("download"):
        return download_response(image, filename, content_type)
    return HttpResponse(image, content_type=content_type)


@staff_required
@require_GET
def export_metrics(request, slug: str):
    study = get_object_or_404(Study, slug=slug)
    labels = request.GET.get("labels", study_metrics.POOLED)
    if labels not in study_metrics.LABEL_SOURCES:
        return _unknown_labels(labels)
    body = render_metrics(study_metrics.metrics_document(study=study, labels=labels))
    suffix = "" if labels == study_metrics.POOLED else f"-{labels}"
    return download_response(body, f"{study.slug}-metrics{suffix}.json", "application/json")


def _unknown_labels(labels: str) -> HttpResponse:
    return HttpResponseBadRequest(
        f"unknown label source {labels[:50]!r}; use one of "
        f"{', '.join(study_metrics.LABEL_SOURCES)}\n",
        content_type="text/plain",
    )


class StudyMetrics(APIView):
    # JSON only: the document is tens of thousands of lines, and the browsable renderer drew it
    # as a 400,000 px page. A browser gets the raw JSON (which it can fold); the staff study page
    # is the readable view of the same numbers.
    renderer_classes = [JSONRenderer]

    @extend_schema(
        responses=OpenApiTypes.OBJECT,
        description="The validated-metrics document; see docs/metrics.md. Optional query "
        "parameter labels=pooled|adjudicated|majority|dawid-skene|mace|glad (docs/metrics.md, "
        "'Label sources').",
    )
    def get(self, request, slug):
        study = get_object_or_404(Study, slug=slug)
        labels = request.query_params.get("labels", study_metrics.POOLED)
        if labels not in study_metrics.LABEL_SOURCES:
            return Response(
                {
                    "detail": f"unknown label source; use one of {', '.join(study_metrics.LABEL_SOURCES)}"
                },
                status=400,
            )
        return Response(study_metrics.metrics_document_cached(study=study, labels=labels))

"""Staff pages of the automated judges: score a study, follow the job, calibrate τ, review.

Every view requires a staff account (403; anonymous users are sent to log in). Scoring runs
on the Celery "gpu" queue; the page polls the job's progress with htmx every second.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotations.common.permissions import staff_required
from annotations.exports.writers import render_rows_csv
from annotations.models import BackgroundJob, Study
from scoring import tasks

from . import selectors, services
from .forms import CalibrateForm, ScoreForm
from .report import roc

FIGURE_TYPES = {"svg": "image/svg+xml", "png": "image/png"}


@staff_required
@require_GET
def study_judges(request, slug: str):
    study = get_object_or_404(Study, slug=slug)
    return render(request, "scoring/study_judges.html", _page_context(study))


def _page_context(study: Study, **overrides) -> dict:
    review_count, review_rows = selectors.review_items(study=study, limit=20)
    thresholds = selectors.refusal_thresholds_current(study=study)
    context = {
        "study": study,
        "judge_names": selectors.judge_names(),
        "counts": selectors.judgment_counts(study=study),
        "errors": selectors.judgment_errors(study=study),
        "thresholds": thresholds,
        "calibrated_judges": sorted({row.judge for row in thresholds}),
        "review_count": review_count,
        "review_rows": review_rows,
        "jobs": selectors.scoring_jobs(study=study),
        "score_form": ScoreForm(),
        "calibrate_form": CalibrateForm(),
    }
    return context | overrides


@staff_required
@require_POST
def judge_score(request, slug: str):
    study = get_object_or_404(Study, slug=slug)
    form = ScoreForm(request.POST)
    if not form.is_valid():
        if request.htmx:
            return render(request, "scoring/partials/score_errors.html", {"form": form}, status=400)
        return render(
            request, "scoring/study_judges.html", _page_context(study, score_form=form), status=400
        )
    data = form.cleaned_data
    job = tasks.scoring_job_enqueue(
        study=study,
        judge_name=data["judge"],
        device=data["device"] or None,
        batch_size=data["batch_size"],
        created_by=request.user,
    )
    if request.htmx:
        return render(request, "scoring/job.html#progress", {"job": job})
    return redirect("scoring:job_progress", pk=job.pk)


@staff_required
@require_GET
def job_progress(request, pk: int):
    job = get_object_or_404(
        BackgroundJob.objects.select_related("study"), pk=pk, kind=selectors.SCORING_JOB_KIND
    )
    template = "scoring/job.html#progress" if request.htmx else "scoring/job.html"
    return render(request, template, {"job": job})


@staff_required
@require_POST
def threshold_calibrate(request, slug: str):
    study = get_object_or_404(Study, slug=slug)
    form = CalibrateForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Nothing calibrated: {form.errors.as_text()}")
        return redirect("scoring:study_judges", slug=study.slug)
    result = services.refusal_threshold_calibrate(
        study=study, judge_name=form.cleaned_data["judge"], criterion=form.cleaned_data["criterion"]
    )
    for row in result.thresholds:
        messages.success(
            request,
            f"{row.generator or 'all generators'}: τ = {row.tau:.4f} "
            f"(precision {row.precision:.2f}, recall {row.recall:.2f}, n = {row.n})",
        )
    for generator, reason in result.skipped.items():
        messages.warning(request, f"{generator or 'all generators'}: no τ chosen ({reason})")
    return redirect("scoring:study_judges", slug=study.slug)


@staff_required
@require_GET
def roc_figure(request, slug: str, judge: str, fmt: str):
    study = get_object_or_404(Study, slug=slug)
    rows = selectors.refusal_thresholds_current(study=study, judge=judge)
    if not rows or fmt not in (*FIGURE_TYPES, "csv"):
        raise Http404("no calibration for this judge")
    curves = [
        {
            "label": row.generator or "all generators",
            "points": row.roc_points,
            "legend": f"{row.generator or 'all generators'} (AUC {row.auc:.2f}, τ = {row.tau:.3f})",
            "chosen": _chosen_point(row),
        }
        for row in rows
    ]
    filename = f"{study.slug}-{judge}-roc.{fmt}"
    if fmt == "csv":
        body = render_rows_csv(roc.roc_rows(curves), roc.ROC_COLUMNS)
        response = HttpResponse(body, content_type="text/csv")
    else:
        image = roc.roc_chart(curves, title=f"{judge}: refusal ROC ({study.slug})", fmt=fmt)
        response = HttpResponse(image, content_type=FIGURE_TYPES[fmt])
    if fmt == "csv" or request.GET.get("download"):
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _chosen_point(row) -> dict:
    # Youden's J = TPR − FPR, so the chosen point's FPR is recall − J.
    return {"fpr": row.recall - row.youden_j, "tpr": row.recall}


@staff_required
@require_GET
def review_items(request, slug: str):
    study = get_object_or_404(Study, slug=slug)
    count, rows = selectors.review_items(study=study, limit=1000)
    return render(
        request, "scoring/review_items.html", {"study": study, "count": count, "rows": rows}
    )

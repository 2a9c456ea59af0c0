"""Staff pages of the REFLECT app: face sets, runs, the report (tables, figures, downloads).

Thin: authenticate (staff_required), validate, call one service or selector, render.
"""

from __future__ import annotations

import json

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotations.common.media import image_response
from annotations.common.permissions import staff_required
from generation.models import FaceSet
from scoring.reflect import reports, selectors
from scoring.reflect import tasks as reflect_tasks
from scoring.reflect.backends import BackendConfigError, model_choice
from scoring.reflect.models import FaceImage
from scoring.reflect.page_figures import (
    TABLE_BUILDERS,
    figure_4_charts,
    figure_bytes,
    figure_list,
    table_csv,
)
from scoring.reflect.protocol import TASKS
from scoring.report import tasks as report_tasks
from scoring.report.waiting import file_response_or_wait

CONTENT_TYPES = {"svg": "image/svg+xml", "png": "image/png"}


@staff_required
@require_GET
def face_set_list(request):
    return render(request, "reflect/face_set_list.html", {"face_sets": selectors.face_set_list()})


@staff_required
@require_GET
def face_set_detail(request, slug: str):
    face_set = get_object_or_404(FaceSet, slug=slug)
    report, current = reports.report_cached(face_set=face_set)
    context = {
        "face_set": face_set,
        "counts": selectors.face_set_counts(face_set=face_set),
        "runs": reports.run_summaries(face_set=face_set),
        "models": sorted(settings.ACRB_VLM_MODELS),
        "tasks": TASKS,
        **_report_context(report),
        "report_current": current,
        "templates": selectors.template_previews(face_set=face_set),
    }
    return render(request, "reflect/face_set_detail.html", context)


def _report_context(report: dict | None) -> dict:
    if report is None:
        return {"report": None}
    return {
        "report": report,
        "tables": {name: builder(report) for name, builder in TABLE_BUILDERS.items()},
        "figures": figure_list(report),
        "figure_4": figure_4_charts(report),
    }


@staff_required
@require_POST
def run_start(request, slug: str):
    face_set = get_object_or_404(FaceSet, slug=slug)
    tasks = [t for t in request.POST.getlist("tasks") if t in TASKS]
    try:
        choice = model_choice(request.POST.get("model", ""), settings.ACRB_VLM_MODELS)
        run, jobs = reflect_tasks.run_start(
            face_set=face_set, choice=choice, tasks=tasks, created_by=request.user
        )
    except (BackendConfigError, ValueError) as error:
        messages.error(request, str(error))
        return redirect("reflect:face_set_detail", slug=slug)
    messages.success(request, f"Queued {len(jobs)} job(s) for {run.label}.")
    return redirect("staff:job_detail", pk=jobs[0].pk)


@staff_required
@require_POST
def report_refresh(request, slug: str):
    face_set = get_object_or_404(FaceSet, slug=slug)
    link = {
        "url": reverse("reflect:face_set_detail", args=[face_set.slug]) + "#report",
        "label": f"Open the report of {face_set.name}",
    }
    job = reflect_tasks.report_request(face_set=face_set, created_by=request.user, link=link)
    return redirect("staff:job_detail", pk=job.pk)


def _report_or_404(face_set: FaceSet) -> dict:
    report, _ = reports.report_cached(face_set=face_set)
    if report is None:
        raise Http404("no report computed yet for this face set")
    return report


@staff_required
@require_GET
def report_json(request, slug: str):
    face_set = get_object_or_404(FaceSet, slug=slug)
    response = JsonResponse(_report_or_404(face_set), json_dumps_params={"indent": 1})
    response["Content-Disposition"] = f'attachment; filename="{slug}-report.json"'
    return response


@staff_required
@require_GET
def report_csv(request, slug: str, table: str):
    if table not in TABLE_BUILDERS:
        raise Http404("no such table")
    report = _report_or_404(get_object_or_404(FaceSet, slug=slug))
    response = HttpResponse(table_csv(TABLE_BUILDERS[table](report)), content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="{slug}-{table}.csv"'
    return response


@staff_required
@require_GET
def report_figure(request, slug: str, name: str, fmt: str):
    if fmt not in CONTENT_TYPES:
        raise Http404("no such format")
    report = _report_or_404(get_object_or_404(FaceSet, slug=slug))
    figure = next((f for f in figure_list(report) if f["name"] == name), None)
    if figure is None:
        raise Http404("no such figure")
    return HttpResponse(figure_bytes(report, figure, fmt), content_type=CONTENT_TYPES[fmt])


@staff_required
@require_GET
def report_document(request, slug: str, fmt: str):
    """The set's audit report (the document ``reflect_report`` writes) as a download: HTML
    (self-contained, no server needed) or PDF."""
    face_set = get_object_or_404(FaceSet, slug=slug)
    if fmt not in ("html", "pdf"):
        raise Http404("no such format")
    return file_response_or_wait(
        request,
        report_tasks.reflect_report_file(face_set=face_set, fmt=fmt),
        filename=f"{slug}-reflect-report.{fmt}",
        content_type="application/pdf" if fmt == "pdf" else "text/html; charset=utf-8",
        what="The REFLECT audit report" + (" (PDF)" if fmt == "pdf" else ""),
    )


@staff_required
@require_GET
def run_answers(request, slug: str, run_id: int):
    face_set = get_object_or_404(FaceSet, slug=slug)
    run = get_object_or_404(face_set.runs, pk=run_id)
    lines = [
        json.dumps(row, ensure_ascii=False, sort_keys=True)
        for row in selectors.answer_rows(face_set=face_set, run=run)
    ]
    response = HttpResponse("\n".join(lines) + "\n", content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="{slug}-{run.pk}-answers.jsonl"'
    return response


@staff_required
@require_GET
def face_image(request, pk: int):
    image = get_object_or_404(FaceImage, pk=pk)
    return image_response(image.file)

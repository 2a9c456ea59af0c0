"""Staff pages of Stages I and II: plan a study, attach generators, start and follow
generation, review face-edit QC. Every view requires staff (403, or 302 to log in)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotations.common.media import image_response
from annotations.common.permissions import staff_required
from annotations.common.study_address import study_addresses_split
from annotations.models import BackgroundJob, Study
from generation import selectors, services, tasks
from generation.faces import services as face_services
from generation.forms import FaceEditAcceptForm, GeneratorAttachForm, PlanForm
from generation.models import FaceEdit, FaceSet, FaceTemplate, GenerationRequest, PlannedPrompt
from generation.prompts.rephrase import RECORD_FORMATS, RephraseError


@staff_required
@require_GET
def overview(request):
    # A study stored under a bad address cannot be linked to: listed apart, with its rename.
    studies, unlinkable = study_addresses_split(selectors.studies_with_plans())
    context = {
        "studies": studies,
        "unlinkable_studies": unlinkable,
        "face_sets": selectors.face_set_list(),
    }
    return render(request, "generation/overview.html", context)


def _saved(upload, folder: Path) -> Path | None:
    if not upload:
        return None
    target = folder / Path(upload.name).name
    with target.open("wb") as handle:
        for chunk in upload.chunks():
            handle.write(chunk)
    return target


@staff_required
@require_http_methods(["GET", "POST"])
def plan_new(request):
    form = PlanForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        harmful_share, harmful_seed = form.harmful_choice()
        try:
            with tempfile.TemporaryDirectory() as folder:
                # Drafted before the transaction: rephrasing calls the rewriter, and a failure
                # there must leave neither a study nor a plan behind.
                draft = services.study_plan_draft(
                    taxonomy_path=_saved(data["taxonomy_file"], Path(folder)),
                    base_prompts_path=_saved(data["base_prompts_file"], Path(folder))
                    or form.shipped_base_prompts_path(),
                    sample_size=data["sample_size"],
                    sample_seed=data["sample_seed"],
                    attributes=data["attributes"],
                    missing_slot=data["missing_slot"],
                    rephrase=data["rephrase"] or None,
                    harmful_share=harmful_share,
                    harmful_seed=harmful_seed,
                )
                study = services.study_plan_create(
                    slug=data["slug"],
                    name=data["name"],
                    draft=draft,
                    form_key=data["request_key"],
                    user=request.user,
                )
        except (ValueError, KeyError, RephraseError) as error:
            form.add_error(None, f"No plan was stored: {error}")
        else:
            messages.success(request, f"Plan stored for {study.slug}.")
            return redirect("generation:study_plan", slug=study.slug)
    status = 400 if form.errors else 200
    return render(request, "generation/plan_new.html", {"form": form}, status=status)


@staff_required
@require_GET
def study_plan(request, slug: str):
    study = get_object_or_404(Study, slug=slug)
    status = request.GET.get("status") or ""
    if status and status not in PlannedPrompt.Status.values:
        raise Http404("no such status")
    context = {
        "study": study,
        "plan": getattr(study, "generation_plan", None),
        "summary": selectors.plan_summary(study=study),
        "rows": selectors.planned_prompt_list(study=study, status=status or None, limit=500),
        "status": status,
        "rephrased": selectors.rephrasing_summary(study=study),
    }
    return render(request, "generation/study_plan.html", context)


REPHRASING_FILTERS = {"": None, "kept": True, "rejected": False}
EXPORT_TYPES = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson; charset=utf-8"}


@staff_required
@require_GET
def rephrasing_list(request, slug: str):
    """Each base prompt's rewrite, kept or rejected with the reason; ``?format=csv|jsonl``
    downloads the same rows (``?show=kept|rejected`` filters both)."""
    study = get_object_or_404(Study, slug=slug)
    show = request.GET.get("show") or ""
    export = request.GET.get("format") or ""
    if show not in REPHRASING_FILTERS or (export and export not in EXPORT_TYPES):
        raise Http404("no such filter or format")
    kept = REPHRASING_FILTERS[show]
    if export:
        records = selectors.rephrasing_records(study=study, kept=kept)
        response = HttpResponse(RECORD_FORMATS[export](records), content_type=EXPORT_TYPES[export])
        name = f"{study.slug}-rephrasings{'-' + show if show else ''}.{export}"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response
    context = {
        "study": study,
        "show": show,
        "plan": getattr(study, "generation_plan", None),
        "summary": selectors.rephrasing_summary(study=study),
        "rows": selectors.rephrasing_list(study=study, kept=kept),
    }
    return render(request, "generation/rephrasing_list.html", context)


def _latest_job(study: Study):
    return BackgroundJob.objects.filter(study=study, kind=services.JOB_KIND).first()


@staff_required
@require_GET
def study_generation(request, slug: str):
    study = get_object_or_404(Study, slug=slug)
    context = {
        "study": study,
        "generators": selectors.study_generator_list(study=study),
        "attach_form": GeneratorAttachForm(),
        "counts": selectors.generation_status_counts(study=study),
        "job": _latest_job(study),
        "duplicates": selectors.duplicate_images(study=study),
        "planned": selectors.plan_summary(study=study).planned,
    }
    return render(request, "generation/study_generation.html", context)


@staff_required
@require_GET
def generation_progress(request, slug: str):
    study = get_object_or_404(Study, slug=slug)
    context = {
        "study": study,
        "counts": selectors.generation_status_counts(study=study),
        "job": _latest_job(study),
    }
    return render(request, "generation/study_generation.html#progress", context)


@staff_required
@require_POST
def generator_attach(request, slug: str):
    study = get_object_or_404(Study, slug=slug)
    form = GeneratorAttachForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Nothing attached: {form.errors.as_text()}")
        return redirect("generation:study_generation", slug=slug)
    try:
        services.study_generator_attach(
            study=study, name=form.cleaned_data["name"], seeds=form.cleaned_data["seeds"]
        )
    except ValueError as error:
        messages.error(request, f"Nothing attached: {error}")
    else:
        messages.success(request, f"Generator {form.cleaned_data['name']} attached.")
    return redirect("generation:study_generation", slug=slug)


@staff_required
@require_POST
def generation_start(request, slug: str):
    study = get_object_or_404(Study, slug=slug)
    if not study.generators.exists():
        messages.error(request, "Attach a generator first.")
    else:
        job = tasks.generation_run(study=study, created_by=request.user)
        messages.success(
            request, f"Generation queued (job #{job.pk}, {job.params['requests']} requests)."
        )
    return redirect("generation:study_generation", slug=slug)


@staff_required
@require_GET
def request_list(request, slug: str):
    study = get_object_or_404(Study, slug=slug)
    status = request.GET.get("status") or ""
    if status and status not in GenerationRequest.Status.values:
        raise Http404("no such status")
    context = {
        "study": study,
        "status": status,
        "statuses": GenerationRequest.Status.values,
        "rows": selectors.generation_request_list(study=study, status=status or None, limit=500),
    }
    return render(request, "generation/request_list.html", context)


@staff_required
@require_GET
def face_set_list(request):
    return render(
        request, "generation/face_set_list.html", {"face_sets": selectors.face_set_list()}
    )


@staff_required
@require_GET
def face_set_detail(request, slug: str):
    face_set = get_object_or_404(FaceSet, slug=slug)
    context = {"face_set": face_set, "rows": selectors.face_qc_rows(face_set=face_set)}
    return render(request, "generation/face_set_detail.html", context)


@staff_required
@require_POST
def face_edit_accept(request, slug: str, edit_id: int):
    face_set = get_object_or_404(FaceSet, slug=slug)
    try:
        edit = selectors.face_edit_get(face_set=face_set, edit_id=edit_id)
    except FaceEdit.DoesNotExist as error:
        raise Http404("no such edit") from error
    form = FaceEditAcceptForm(request.POST)
    if not form.is_valid():
        return render(
            request,
            "generation/face_set_detail.html#edit-row",
            {"face_set": face_set, "edit": edit},
            status=400,
        )
    edit = face_services.face_edit_accept(
        edit=edit, user=request.user, accepted=form.cleaned_data["accepted"]
    )
    if request.htmx:
        return render(
            request,
            "generation/face_set_detail.html#edit-row",
            {"face_set": face_set, "edit": edit},
        )
    return redirect("generation:face_set_detail", slug=slug)


@staff_required
@require_GET
def face_image(request, slug: str, kind: str, pk: int):
    """Source photos and edits, served only to staff (media have no public route)."""
    face_set = get_object_or_404(FaceSet, slug=slug)
    if kind == "source":
        record = get_object_or_404(FaceTemplate, pk=pk, face_set=face_set)
    elif kind == "edit":
        record = get_object_or_404(FaceEdit, pk=pk, template__face_set=face_set)
    else:
        raise Http404("no such image kind")
    if not record.image:
        raise Http404("no image")
    return image_response(record.image)

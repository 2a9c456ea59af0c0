"""Staff pages: studies, the validation dashboard, batches, imports and exports.

Every view requires a staff account (403 otherwise); objects are looked up by id or slug
and 404 when missing.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotations import selectors, services
from annotations.common import jobs
from annotations.common.http import download_response
from annotations.common.permissions import staff_required
from annotations.common.study_address import study_addresses_split
from annotations.exports import datasets as export_datasets
from annotations.exports import writers as export_writers
from annotations.imports import importers
from annotations.imports.manifest import LabelsInvalid, ManifestInvalid, decode_utf8
from annotations.models import BackgroundJob, Batch, Item, Study
from annotations.policies import PolicyError
from annotations.qualification import status as qualification
from annotations.staff import audit_context as study_settings
from annotations.staff import batch_subset
from annotations.staff.forms import (
    AddAnnotatorsForm,
    BatchCreateForm,
    ItemExcludeForm,
    ItemImageReplaceForm,
    ItemReviewNoteForm,
    LabelImportForm,
    ManifestUploadForm,
    ReassignForm,
    StudyAuditContextForm,
)
from annotations.tasks import batch_create_task, import_items_task


@staff_required
@require_GET
def study_list(request):
    # A study stored under a bad address cannot be linked to: listed apart, with its rename.
    linkable, unlinkable = study_addresses_split(Study.objects.all())
    studies = [(study, selectors.study_counts(study=study)) for study in linkable]
    context = {"studies": studies, "unlinkable_studies": unlinkable}
    return render(request, "staff/study_list.html", context)


@staff_required
@require_GET
def study_detail(request, slug: str):
    study = get_object_or_404(Study, slug=slug)
    # The statistics (validation, rates, gold accuracy) are scoring's fragment, which the page
    # loads by URL name (metrics:study_statistics): annotations imports nothing from scoring.
    context = {
        "study": study,
        "counts": selectors.study_counts(study=study),
        "batches": study.batches.all(),
        "flags_waiting": selectors.flag_queue_size(study=study),
        "jobs": study.jobs.all()[:10],
        "audit_context_missing": study_settings.audit_context_missing(study=study),
        "export_writers": export_writers.WRITERS.values(),
        "label_import_form": LabelImportForm(),
        # Compare models sets one study's generators side by side: it needs two of them.
        "generators": selectors.study_generators(study=study),
    }
    return render(request, "staff/study_detail.html", context)


@staff_required
@require_http_methods(["GET", "POST"])
def study_audit_context(request, slug: str):
    study = get_object_or_404(Study, slug=slug)
    initial = {field: getattr(study, field) for field in study_settings.AUDIT_CONTEXT_FIELDS}
    form = StudyAuditContextForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            changed = study_settings.study_audit_context_update(
                study=study, values=form.cleaned_data, changed_by=request.user
            )
        except study_settings.AuditContextInvalid as invalid:
            for field, message in invalid.errors.items():
                form.add_error(field if field in form.fields else None, message)
        else:
            names = ", ".join(form.fields[f].label.lower() for f in changed) or "nothing changed"
            messages.success(request, f"Audit context saved: {names}.")
            return redirect("staff:study_audit_context", slug=slug)
    context = {
        "study": study,
        "form": form,
        "history": study_settings.study_audit_context_history(study=study),
    }
    return render(
        request, "staff/study_audit_context.html", context, status=400 if form.errors else 200
    )


@staff_required
@require_http_methods(["GET", "POST"])
def batch_create(request, slug: str):
    study = get_object_or_404(Study, slug=slug)
    form = BatchCreateForm(request.POST or None, initial={"overlap_k": study.overlap_k})
    # Which items, and each annotator's workload first (annotations/staff/batch_subset.py).
    subset = batch_subset.BatchSubsetForm(study, request.POST or None, prefix="subset")
    preview = None
    if request.method == "POST" and form.is_valid() and subset.is_valid():
        try:
            batch_request = _batch_request(study, form, subset, request.user)
            if "preview" in request.POST:
                preview = batch_subset.workload_preview(request=batch_request)
                preview["subset"] = subset.description()
        except PolicyError as exc:  # BatchRequestInvalid: every problem, one line each
            form.add_error(None, str(exc).splitlines())
        if preview is not None:
            # The seed the preview used, so "Create batch" makes exactly the batch shown.
            bound = request.POST.copy()
            bound["seed"] = str(preview["seed"])
            form = BatchCreateForm(bound)
        elif not form.errors:
            job = jobs.job_create(
                kind="batch_create",
                study=study,
                params={"name": batch_request.name},
                created_by=request.user,
            )
            request_json = batch_request.to_json()
            transaction.on_commit(lambda: batch_create_task.delay(job.pk, request_json))
            return redirect("staff:job_detail", pk=job.pk)
    context = {
        "study": study,
        "form": form,
        "subset": subset,
        "preview": preview,
        "harmful_items": selectors.harmful_item_count(study=study),
    }
    return render(
        request,
        "staff/batch_create.html",
        context,
        status=400 if form.errors or subset.errors else 200,
    )


def _batch_request(study, form, subset, user):
    """The form's batch request, checked (BatchRequestInvalid names every problem)."""
    item_ids = batch_subset.subset_item_ids(study=study, form=subset)
    return services.batch_request_build(
        study=study,
        annotators=list(form.cleaned_data["annotators"]),
        created_by=user,
        item_ids=item_ids,
        subset=subset.description() if item_ids is not None else "",
        **form.request_options(),
    )


@staff_required
@require_POST
def study_harmful_controls(request, slug: str):
    """Set (not toggle) whether new batches include harmful controls: ``show`` = 1 or 0."""
    study = get_object_or_404(Study, slug=slug)
    show = request.POST.get("show")
    if show not in ("0", "1"):
        messages.error(request, "Nothing changed: 'show' must be 1 or 0.")
    else:
        study_settings.study_harmful_controls_set(
            study=study, show=show == "1", changed_by=request.user
        )
        messages.success(
            request,
            "New batches include harmful controls (behind a content warning)."
            if show == "1"
            else "New batches leave harmful controls out.",
        )
    return redirect("staff:batch_create", slug=slug)


@staff_required
@require_GET
def batch_detail(request, pk: int):
    batch = get_object_or_404(Batch.objects.select_related("study"), pk=pk)
    context = {
        "batch": batch,
        "progress": selectors.batch_annotator_progress(batch=batch),
        "qualification_rows": qualification.batch_rows(batch=batch),
        "add_form": AddAnnotatorsForm(),
        "reassign_form": ReassignForm(),
    }
    return render(request, "staff/batch_detail.html", context)


@staff_required
@require_POST
def batch_add_annotators(request, pk: int):
    batch = get_object_or_404(Batch, pk=pk)
    form = AddAnnotatorsForm(request.POST)
    if form.is_valid():
        added = services.batch_add_annotators(
            batch=batch, annotators=list(form.cleaned_data["annotators"])
        )
        messages.success(request, f"Added {added} assignments.")
    else:
        messages.error(request, f"Nothing changed: {form.errors.as_text()}")
    return redirect("staff:batch_detail", pk=batch.pk)


@staff_required
@require_POST
def batch_reassign(request, pk: int):
    batch = get_object_or_404(Batch, pk=pk)
    form = ReassignForm(request.POST)
    if form.is_valid():
        try:
            moved = services.assignments_reassign(
                batch=batch,
                from_annotator=form.cleaned_data["from_annotator"],
                to_annotators=list(form.cleaned_data["to_annotators"]),
                seed=batch.seed,
            )
        except PolicyError as exc:
            messages.error(request, f"Nothing changed: {exc}")
        else:
            messages.success(request, f"Reassigned {moved} open assignments.")
    else:
        messages.error(request, f"Nothing changed: {form.errors.as_text()}")
    return redirect("staff:batch_detail", pk=batch.pk)


@staff_required
@require_http_methods(["GET", "POST"])
def items_upload(request, slug: str):
    study = get_object_or_404(Study, slug=slug)
    form = ManifestUploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["manifest"]
        suffix = Path(upload.name).suffix.lower()
        if suffix not in (".jsonl", ".zip"):
            form.add_error(
                "manifest", "upload a .jsonl manifest or a .zip holding one manifest and its images"
            )
        else:
            folder = Path(tempfile.mkdtemp(prefix="upload-", dir=_upload_root()))
            target = folder / f"upload{suffix}"
            with target.open("wb") as handle:
                for chunk in upload.chunks():
                    handle.write(chunk)
            job = jobs.job_create(
                kind="import_items",
                study=study,
                params={"file": upload.name},
                created_by=request.user,
            )
            transaction.on_commit(
                lambda: import_items_task.delay(job.pk, study.pk, str(target), upload.name)
            )
            return redirect("staff:job_detail", pk=job.pk)
    return render(
        request,
        "staff/items_upload.html",
        {"study": study, "form": form},
        status=400 if form.errors else 200,
    )


def _upload_root() -> Path:
    root = Path(settings.VAR_DIR) / "uploads"
    root.mkdir(parents=True, exist_ok=True)
    return root


@staff_required
@require_GET
def job_detail(request, pk: int):
    job = get_object_or_404(BackgroundJob, pk=pk)
    template = "staff/job_detail.html#job" if request.htmx else "staff/job_detail.html"
    return render(request, template, {"job": job})


@staff_required
@require_GET
def export_annotations(request, slug: str, fmt: str):
    study = get_object_or_404(Study, slug=slug)
    try:
        writer = export_writers.writer_for(fmt)
    except export_writers.UnknownFormat:
        raise Http404("unknown export format") from None
    dataset = export_datasets.annotation_export(study=study)
    filename = f"{study.slug}-{dataset.name}.{writer.extension}"
    return download_response(writer.write(dataset), filename, writer.content_type)


@staff_required
@require_POST
def annotations_upload(request, slug: str):
    study = get_object_or_404(Study, slug=slug)
    form = LabelImportForm(request.POST, request.FILES)
    if not form.is_valid():
        problem = "Choose a CSV file of labels." if "labels" in form.errors else "Reload the page."
        messages.error(request, f"Nothing was imported. {problem}")
        return redirect("staff:study_detail", slug=study.slug)
    upload = form.cleaned_data["labels"]
    try:
        count = importers.annotations_import(
            study=study,
            csv_text=decode_utf8(upload.read()),
            source_name=upload.name,
            created_by=request.user,
            create_annotators=form.cleaned_data["create_annotators"],
            allow_staff_annotators=form.cleaned_data["allow_staff_annotators"],
            request_key=form.cleaned_data["request_key"],
        )
    except importers.LabelImportRepeated as repeated:
        messages.info(request, f"{upload.name}: {repeated}.")
    except ManifestInvalid as exc:
        if isinstance(exc, LabelsInvalid):
            exc = exc.with_remedies(
                unknown="tick 'Create unknown annotators' to import them as new accounts",
                staff="tick 'Allow staff accounts as annotators' to import their labels",
            )
        # One message per problem, each naming the user's file.
        messages.error(request, f"Nothing was imported from {upload.name}.")
        for line in exc.lines_for(upload.name, limit=20):
            messages.error(request, line)
    else:
        messages.success(request, f"Imported {count} labels from {upload.name}.")
    return redirect("staff:study_detail", slug=study.slug)


# --- broken-image flags: the review queue (docs/annotation.md#broken-image-flags) -----------


@staff_required
@require_GET
def flag_queue(request, slug: str):
    study = get_object_or_404(Study, slug=slug)
    waiting, queue = selectors.flag_queue(study=study)
    context = {
        "study": study,
        "waiting": waiting,
        "queue": queue,
        "by_annotator": selectors.flag_counts_by_annotator(study=study),
        "reviews": selectors.item_review_list(study=study),
        "excluded": selectors.excluded_items(study=study),
        "exclude_form": ItemExcludeForm(),
        "note_form": ItemReviewNoteForm(),
        "replace_form": ItemImageReplaceForm(),
    }
    return render(request, "staff/flag_queue.html", context)


def _review_action(request, pk: int, form_class, act) -> HttpResponse:
    """Validate the form, run one review service, and go back to the queue with what happened."""
    item = get_object_or_404(Item.objects.select_related("study"), pk=pk)
    form = form_class(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, f"{item.item_id}: nothing changed: {form.errors.as_text()}")
    else:
        try:
            done = act(item, form.cleaned_data)
        except ValidationError as exc:
            messages.error(request, f"{item.item_id}: nothing changed: {' '.join(exc.messages)}")
        else:
            messages.success(request, f"{item.item_id}: {done}.")
    return redirect("staff:flag_queue", slug=item.study.slug)


@staff_required
@require_POST
def item_flags_dismiss(request, pk: int):
    def act(item, data):
        review = services.item_flags_dismiss(item=item, user=request.user, reason=data["reason"])
        return f"{review.open_flags} flag(s) dismissed"

    return _review_action(request, pk, ItemReviewNoteForm, act)


@staff_required
@require_POST
def item_exclude(request, pk: int):
    def act(item, data):
        review = services.item_exclude(item=item, reason=data["reason"], user=request.user)
        return (
            f"excluded from every statistic ({review.closed_assignments} open assignment(s) "
            "withdrawn)"
        )

    return _review_action(request, pk, ItemExcludeForm, act)


@staff_required
@require_POST
def item_include(request, pk: int):
    def act(item, data):
        services.item_include(item=item, user=request.user, reason=data["reason"])
        return "included again"

    return _review_action(request, pk, ItemReviewNoteForm, act)


@staff_required
@require_POST
def item_image_replace(request, pk: int):
    def act(item, data):
        upload = data["image"]
        folder = Path(tempfile.mkdtemp(prefix="replace-", dir=_upload_root()))
        try:
            # Keep the user's file name (storage makes it safe): it names the new file.
            path = folder / Path(upload.name).name
            with path.open("wb") as handle:
                for chunk in upload.chunks():
                    handle.write(chunk)
            services.item_image_replace(
                item=item, image=path, user=request.user, reason=data["reason"]
            )
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return f"image replaced by {upload.name}"

    return _review_action(request, pk, ItemImageReplaceForm, act)

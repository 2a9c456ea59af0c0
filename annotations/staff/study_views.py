"""Staff pages: a new study from images in the browser (docs/annotation.md, "Create a study in
the browser"). Check (every problem at once, or a preview), then create all or nothing."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.db import IntegrityError
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from annotations.common.permissions import staff_required
from annotations.imports import study_upload
from annotations.imports.manifest import ManifestInvalid, RecordError
from annotations.imports.uploads import UploadInvalid
from annotations.staff.study_forms import StudyNewForm

SESSION_KEY = "study_new"
# The first 50 items, each with its thumbnail (docs/annotation.md, "New study from images"): 96 px
# JPEGs of a few kB each, so the check's answer stays a few hundred kB.
PREVIEW_ROWS = 50
PREVIEW_THUMBNAILS = PREVIEW_ROWS
MAX_PROBLEMS_SHOWN = 200


def _staging_root() -> Path:
    root = Path(settings.VAR_DIR) / "uploads"
    root.mkdir(parents=True, exist_ok=True)
    return root


def _forget_staged(request) -> None:
    staged = request.session.pop(SESSION_KEY, None)
    if staged:
        study_upload.study_upload_discard(root=_staging_root(), token=staged.get("token", ""))


@staff_required
@require_http_methods(["GET", "POST"])
def study_new(request):
    form = StudyNewForm(request.POST or None, request.FILES or None)
    context = {"form": form, "problems": [], "preview": None}
    if request.method == "POST":
        _forget_staged(request)
        context.update(_check(request, form))
    template = "staff/study_new.html#check" if request.htmx else "staff/study_new.html"
    failed = request.method == "POST" and (form.errors or context["problems"])
    # htmx swaps only 2xx answers; a full-page answer says 400 when something is wrong.
    return render(request, template, context, status=400 if failed and not request.htmx else 200)


def _check(request, form) -> dict:
    """Validate the form and stage the upload; every problem of both comes back together."""
    form_ok = form.is_valid()
    data = getattr(form, "cleaned_data", {})
    if {"images", "archive", "attributes"} & set(form.errors) or "mode" not in data:
        return {}
    attributes = data.get("attributes")
    try:
        staged = study_upload.study_upload_stage(
            root=_staging_root(),
            images=data.get("images") or [],
            archive=data.get("archive"),
            csv_bytes=attributes.read() if attributes is not None else None,
            defaults=form.defaults(),
            mode=data["mode"],
        )
    except ManifestInvalid as invalid:
        return {"problems": _problems(invalid.errors), "problem_count": len(invalid.errors)}
    if not form_ok:
        study_upload.study_upload_discard(root=_staging_root(), token=staged.token)
        return {}
    request.session[SESSION_KEY] = {
        "token": staged.token,
        "name": data["name"],
        "slug": data["slug"],
        "mode": data["mode"],
    }
    return {"preview": _preview(staged), "staged": request.session[SESSION_KEY]}


def _problems(errors: list[RecordError]) -> list[str]:
    lines = [
        f"line {e.line}: {e.field}: {e.message}" if e.line else f"{e.field}: {e.message}"
        for e in errors[:MAX_PROBLEMS_SHOWN]
    ]
    if len(errors) > MAX_PROBLEMS_SHOWN:
        lines.append(f"... and {len(errors) - MAX_PROBLEMS_SHOWN} more problems")
    return lines


def _preview(staged) -> dict:
    records = staged.records
    rows = [
        {
            "record": record,
            "thumbnail": study_upload.thumbnail_data_uri(record.image)
            if index < PREVIEW_THUMBNAILS
            else "",
        }
        for index, record in enumerate(records[:PREVIEW_ROWS])
    ]
    counts: dict[tuple[str, str], int] = {}
    for record in records:
        key = (record.attribute, record.attribute_value)
        counts[key] = counts.get(key, 0) + 1
    return {
        "count": len(records),
        "rows": rows,
        "more": max(0, len(records) - PREVIEW_ROWS),
        "generators": sorted({r.generator for r in records}),
        "domains": sorted({r.domain for r in records}),
        "values": sorted(counts.items()),
    }


@staff_required
@require_POST
def study_new_create(request):
    staged = request.session.get(SESSION_KEY) or {}
    token = request.POST.get("token", "")
    if not staged or token != staged.get("token"):
        messages.error(
            request, "Nothing was created: this upload is no longer available; check it again."
        )
        return redirect("staff:study_new")
    try:
        study = study_upload.study_upload_commit(
            root=_staging_root(),
            token=token,
            name=staged["name"],
            slug=staged["slug"],
            mode=staged["mode"],
        )
    except ManifestInvalid as invalid:
        _forget_staged(request)
        messages.error(request, "Nothing was created.")
        for line in _problems(invalid.errors)[:20]:
            messages.error(request, line)
        return redirect("staff:study_new")
    except (UploadInvalid, IntegrityError) as exc:
        _forget_staged(request)
        reason = exc if isinstance(exc, UploadInvalid) else "that address was taken meanwhile"
        messages.error(request, f"Nothing was created: {reason}.")
        return redirect("staff:study_new")
    request.session.pop(SESSION_KEY, None)
    messages.success(
        request,
        f"Created {study.name} with {study.items.count()} items. Next: invite annotators and create a batch.",
    )
    return redirect("staff:study_detail", slug=study.slug)

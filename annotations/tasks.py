"""Celery tasks of the annotation app: ids in, one service call, progress in BackgroundJob."""

from __future__ import annotations

import shutil
from pathlib import Path

from celery import shared_task

from annotations import services
from annotations.batches.request import BatchRequest
from annotations.common import jobs
from annotations.imports import importers
from annotations.imports.manifest import ManifestInvalid
from annotations.imports.uploads import UploadInvalid, unpack_upload

from .models import Study
from .policies import PolicyError


@shared_task(acks_late=True)
def import_items_task(
    job_id: int, study_id: int, upload_path: str, file_name: str | None = None
) -> None:
    """``file_name`` is the upload's name on the user's machine: every error names it."""
    upload = Path(upload_path)
    file_name = file_name or upload.name
    workdir = upload.parent / "unpacked"
    jobs.job_start(job_id=job_id)
    try:
        with jobs.job_fails_with_its_message(job_id=job_id, message="Nothing was imported."):
            _items_import(job_id, study_id, upload, workdir, file_name)
    finally:
        shutil.rmtree(upload.parent, ignore_errors=True)


def _items_import(job_id: int, study_id: int, upload: Path, workdir: Path, file_name: str):
    try:
        manifest = unpack_upload(
            upload,
            workdir,
            display_name=file_name,
            max_member_bytes=services.image_limits().max_bytes,
        )
        count = importers.items_import(
            study=Study.objects.get(pk=study_id),
            manifest=manifest,
            progress=lambda done, total: (
                jobs.job_progress(job_id=job_id, done=done, total=total)
                if done % 50 == 0 or done == total
                else None
            ),
        )
    except ManifestInvalid as exc:
        jobs.job_finish(
            job_id=job_id,
            message="Nothing was imported.",
            errors=exc.lines_for(file_name, limit=500),
        )
    except UploadInvalid as exc:
        jobs.job_finish(job_id=job_id, message="Nothing was imported.", errors=[str(exc)])
    else:
        jobs.job_finish(job_id=job_id, message=f"Imported {count} items.")


@shared_task(acks_late=True)
def batch_create_task(job_id: int, request: str) -> None:
    """Create a batch in the background: at 100,000 items this takes longer than a request.

    ``request``: a ``BatchRequest`` as JSON. Idempotent, as ``acks_late`` needs: a message
    delivered again after the job finished does nothing, and one delivered again after the
    batch was committed but before the job finished finds that batch (``Batch.job``) and
    finishes the job with the same result."""
    if jobs.job_finished(job_id=job_id):
        return
    jobs.job_start(job_id=job_id, total=1)
    with jobs.job_fails_with_its_message(job_id=job_id, message="No batch was created."):
        _batch_create(job_id, BatchRequest.from_json(request))


def _batch_create(job_id: int, request: BatchRequest) -> None:
    try:
        batch = services.batch_create(request=request, job_id=job_id)
    except PolicyError as exc:
        jobs.job_finish(
            job_id=job_id, message="No batch was created.", errors=str(exc).splitlines()
        )
        return
    count = batch.assignments.count()
    jobs.job_progress(job_id=job_id, done=1)
    message = f"Created batch {batch.name} with {count} assignments (seed {batch.seed})."
    if batch.probability_sample is False:
        message += (
            f" It is not a probability sample ({batch.probability_sample_reason}): its labels are"
            " left out of the prediction-powered estimates."
        )
    jobs.job_finish(
        job_id=job_id,
        message=message,
        result={"batch_id": batch.pk},
    )

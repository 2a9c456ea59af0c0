"""Celery tasks of the annotation app: ids in, one service call, progress in BackgroundJob."""

from __future__ import annotations

import shutil
from pathlib import Path

from celery import shared_task

from . import jobs, services
from .manifest import ManifestInvalid
from .models import Study
from .uploads import UploadInvalid, unpack_upload


@shared_task(acks_late=True)
def import_items_task(job_id: int, study_id: int, upload_path: str) -> None:
    upload = Path(upload_path)
    workdir = upload.parent / "unpacked"
    jobs.job_start(job_id=job_id)
    try:
        manifest = unpack_upload(upload, workdir)
        count = services.items_import(
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
            errors=[str(e) for e in exc.errors][:500],
        )
    except UploadInvalid as exc:
        jobs.job_finish(job_id=job_id, message="Nothing was imported.", errors=[str(exc)])
    else:
        jobs.job_finish(job_id=job_id, message=f"Imported {count} items.")
    finally:
        shutil.rmtree(upload.parent, ignore_errors=True)

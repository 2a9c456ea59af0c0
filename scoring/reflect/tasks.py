"""Celery tasks of the REFLECT app: ids in, one service call, progress in BackgroundJob.

The functions that queue these tasks (``run_start``, ``report_request``: a BackgroundJob row,
tasks sent after commit) live here too, so this module imports the services and the services
never import it back.

One job per task × model. Queue: a run on a local model (``type: transformers``) is sent to
the "gpu" queue by the caller (``run_queue``); API-backend runs are light (threads waiting on
HTTP) and use the default queue. Idempotent: a rerun asks only what has no answer.
"""

from __future__ import annotations

from celery import shared_task
from django.conf import settings
from django.db import transaction

from annotations.common import jobs
from generation.models import FaceSet
from scoring.reflect import reports, services
from scoring.reflect.backends import ModelChoice, model_choice
from scoring.reflect.models import ReflectRun
from scoring.reflect.protocol import TASKS


def run_queue(choice) -> str | None:
    return "gpu" if choice.local else None


@shared_task(acks_late=True)
def run_task(job_id: int, run_id: int, task: str) -> None:
    run = ReflectRun.objects.select_related("face_set").get(pk=run_id)
    jobs.job_start(job_id=job_id)
    try:
        choice = model_choice(run.model_name, settings.ACRB_VLM_MODELS)
        summary = services.run_execute(
            run=run,
            choice=choice,
            task=task,
            progress=lambda done, total: jobs.job_progress(job_id=job_id, done=done, total=total),
        )
    except Exception as error:  # noqa: BLE001 - recorded on the job the staff page shows
        jobs.job_finish(job_id=job_id, message="Stopped; rerun to continue.", errors=[str(error)])
        return
    errors = summary["statuses"].get("error", 0)
    message = f"{task}: {summary['planned']} planned, {summary['asked']} asked."
    jobs.job_finish(
        job_id=job_id,
        message=message,
        errors=[f"{errors} requests failed; run again to retry them"] if errors else None,
    )


@shared_task(acks_late=True)
def report_task(job_id: int, face_set_id: int) -> None:
    jobs.job_start(job_id=job_id, total=1)
    try:
        reports.report_refresh(face_set=FaceSet.objects.get(pk=face_set_id))
    except Exception as error:  # noqa: BLE001
        jobs.job_finish(job_id=job_id, message="Report failed.", errors=[str(error)])
        return
    jobs.job_progress(job_id=job_id, done=1)
    jobs.job_finish(job_id=job_id, message="Report computed.")


def run_start(*, face_set: FaceSet, choice: ModelChoice, tasks: list[str], created_by=None):
    """The staff button: the run, one BackgroundJob per task, queued after commit."""

    unknown = sorted(set(tasks) - set(TASKS))
    if unknown or not tasks:
        raise ValueError(f"choose tasks among {', '.join(TASKS)}")
    run = services.run_get_or_create(face_set=face_set, choice=choice)
    created = []
    queue = run_queue(choice)
    routing = {"queue": queue} if queue else {}
    with transaction.atomic():
        for task in tasks:
            job = jobs.job_create(
                kind=f"reflect {task}",
                created_by=created_by,
                params={"run": run.pk, "task": task, "model": run.label},
            )
            created.append(job)
            transaction.on_commit(
                lambda job=job, task=task: run_task.apply_async(
                    args=[job.pk, run.pk, task], **routing
                )
            )
    return run, created


def report_request(*, face_set: FaceSet, created_by=None, link: dict | None = None):
    """Queue the report computation of a set; the job page shows its progress, and ``link``
    (``{"url", "label"}``, the page that shows the result) once it is done."""
    params = {"face_set": face_set.pk, **({"link": link} if link else {})}
    with transaction.atomic():
        job = jobs.job_create(kind="reflect report", created_by=created_by, params=params)
        transaction.on_commit(lambda: report_task.delay(job.pk, face_set.pk))
    return job

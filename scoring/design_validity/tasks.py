"""The design-validation Celery task: ids in, one service call (``services``). It runs on the
"default" queue (CPU work), not the GPU queue of ``scoring.tasks``."""

from __future__ import annotations

from celery import shared_task
from django.db import transaction

from annotations.models import BackgroundJob, Study
from scoring.design_validity import services


@shared_task(acks_late=True)
def design_validation_task(job_id: int) -> None:
    """Idempotent: a redelivered message finds its job finished and does nothing."""
    if BackgroundJob.objects.filter(pk=job_id, finished_at__isnull=True).exists():
        services.design_validation_run(job_id=job_id)


def design_validation_enqueue(
    *, study: Study, replications: int, seed: int, created_by=None
) -> BackgroundJob:
    """The study's open validation job, or a new one queued after commit."""
    job, created = services.design_validation_create(
        study=study, replications=replications, seed=seed, created_by=created_by
    )
    if created:
        transaction.on_commit(lambda: design_validation_task.apply_async((job.pk,)))
    return job

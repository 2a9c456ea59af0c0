"""Celery tasks of Stage II: ids in, one service call, progress in BackgroundJob.

Routed to the "gpu" queue (settings.CELERY_TASK_ROUTES); serve it with a solo worker per
GPU (``celery -A acrb_web worker -Q gpu -P solo``). The generator stays loaded in the
worker process between tasks (generation.execution.generator_for). Tasks are idempotent
and acknowledged late: a redelivered chunk skips what is done, and a worker that starts
after a crash re-queues the requests its dead predecessor had claimed.
"""

from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import worker_ready

from annotations.models import Study
from generation import execution, services
from generation.models import GenerationRequest

logger = logging.getLogger(__name__)
BUSY_RETRY_S = 2.0  # every provider slot was taken: try the chunk again shortly


@shared_task(acks_late=True, reject_on_worker_lost=True)
def generate_chunk_task(job_id: int, request_ids: list[int], attempt_round: int = 0) -> None:
    outcome = execution.generation_chunk_run(request_ids=request_ids, attempt_round=attempt_round)
    if outcome.busy_ids:
        generate_chunk_task.apply_async(
            (job_id, outcome.busy_ids, attempt_round), countdown=BUSY_RETRY_S
        )
    if outcome.retry_ids:
        generate_chunk_task.apply_async(
            (job_id, outcome.retry_ids, attempt_round + 1), countdown=outcome.retry_after_s
        )
    services.generation_job_refresh(job_id=job_id)


@worker_ready.connect
def resume_after_crash(**_signal_kwargs) -> None:
    """Re-queue studies whose running requests were claimed by a process that is gone."""
    try:
        study_ids = set(
            GenerationRequest.objects.filter(status=GenerationRequest.Status.RUNNING).values_list(
                "study_id", flat=True
            )
        )
        for study in Study.objects.filter(pk__in=study_ids):
            if execution.requests_reopen(study=study):
                services.generation_run(study=study)
    except Exception:  # noqa: BLE001 - a worker must start even if the database is not ready
        logger.exception("could not resume interrupted generation")

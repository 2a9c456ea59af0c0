"""Celery tasks of Stage II: ids in, one service call, progress in BackgroundJob.

The function that queues these tasks (``generation_run``: a BackgroundJob row, tasks sent
after commit) lives here too, so this module imports the services and the services never
import it back.

Routed to the "gpu" queue (settings.CELERY_TASK_ROUTES); serve it with a solo worker per
GPU (``celery -A acrb_web worker -Q gpu -P solo``). The generator stays loaded in the
worker process between tasks (generation.runs.execution.generator_for). Tasks are idempotent
and acknowledged late: a redelivered chunk skips what is done, a worker that starts after a
crash re-queues the requests its dead predecessor had claimed, and a chunk interrupted by a
database restart is retried. Chunks of API generators go to ACRB_API_QUEUE instead
(``execution.generation_queue``).
"""

from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import worker_ready
from django.db import transaction

from annotations.common import jobs
from annotations.models import BackgroundJob, Study
from generation import services
from generation.models import GenerationRequest
from generation.runs import execution

logger = logging.getLogger(__name__)
BUSY_RETRY_S = 2.0  # every provider slot was taken: try the chunk again shortly


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True)
def generate_chunk_task(
    self, job_id: int, request_ids: list[int], attempt_round: int = 0, holder: str = ""
) -> None:
    # A retry after a database error keeps the holder, so it takes back its own claims and
    # provider slots instead of waiting for their lease to run out.
    holder = holder or execution.claim_holder()
    queue = (self.request.delivery_info or {}).get("routing_key")  # follow-ups stay on it
    try:
        outcome = execution.generation_chunk_run(
            request_ids=request_ids, attempt_round=attempt_round, holder=holder
        )
        if outcome.busy_ids:
            generate_chunk_task.apply_async(
                (job_id, outcome.busy_ids, attempt_round), countdown=BUSY_RETRY_S, queue=queue
            )
        if outcome.retry_ids:
            generate_chunk_task.apply_async(
                (job_id, outcome.retry_ids, attempt_round + 1),
                countdown=outcome.retry_after_s,
                queue=queue,
            )
        services.generation_job_refresh(job_id=job_id)
    except jobs.TRANSIENT_DATABASE_ERRORS as error:
        logger.warning("generation chunk of job %s: %s; retrying", job_id, error)
        raise self.retry(
            args=(job_id, request_ids, attempt_round),
            kwargs={"holder": holder},
            countdown=jobs.transient_retry_delay_s(self.request.retries),
            max_retries=jobs.TRANSIENT_RETRY_LIMIT,
        ) from error


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
                generation_run(study=study)
    except Exception:  # noqa: BLE001 - a worker must start even if the database is not ready
        logger.exception("could not resume interrupted generation")


def generation_run(
    *, study: Study, created_by=None, chunk_size: int | None = None
) -> BackgroundJob:
    """Queue the study's missing images (local pipelines on "gpu", APIs on ACRB_API_QUEUE):
    requests are created for gaps, errors and stale claims reopened, and one task per chunk
    is sent after commit. The returned job shows the study's progress."""

    with transaction.atomic():
        services.generation_requests_create(study=study)
        execution.requests_reopen(study=study)
        chunks = services.queued_request_chunks(study=study, chunk_size=chunk_size)
        job = jobs.job_create(
            kind=services.JOB_KIND,
            study=study,
            created_by=created_by,
            params={
                "chunks": len(chunks),
                "requests": sum(len(ids) for _, ids in chunks),
                "queues": sorted({queue for queue, _ in chunks}),
            },
        )
        job_id = job.pk
        transaction.on_commit(
            lambda: [
                generate_chunk_task.apply_async((job_id, ids), queue=queue) for queue, ids in chunks
            ]
        )
    if not chunks:
        services.generation_job_refresh(job_id=job_id)
    return job

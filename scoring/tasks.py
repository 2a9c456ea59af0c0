"""Celery tasks of the scoring app (queue "gpu", see CELERY_TASK_ROUTES): ids in, one service call.

The function that queues these tasks (``scoring_job_enqueue``: a BackgroundJob row, tasks
sent after commit) lives here too, so this module imports the services and the services never
import it back.

Acknowledged late and rejected (so redelivered) if the worker dies: a batch that was cut off
is scored again, and the unique (item, judge, version) judgment keeps that from duplicating
anything; a batch interrupted by a database restart is retried with the same arguments.
The judge is loaded once per worker process (``services.judge_load``). Judges that only call
an HTTP API go to ACRB_API_QUEUE instead (``services.scoring_queue``).
"""

from __future__ import annotations

import logging
from functools import partial

from celery import shared_task
from django.db import transaction

from annotations.common import jobs
from annotations.models import BackgroundJob, Study
from scoring.judges.registry import configured_batch_size
from scoring.models import ScoringBatch

from . import selectors, services

logger = logging.getLogger(__name__)


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True)
def score_items_task(
    self,
    job_id: int,
    study_id: int,
    judge_name: str,
    item_ids: list[int],
    device: str | None = None,
) -> None:
    try:
        services.scoring_batch_run(
            job_id=job_id,
            study_id=study_id,
            judge_name=judge_name,
            item_ids=item_ids,
            device=device,
        )
    except jobs.TRANSIENT_DATABASE_ERRORS as error:
        logger.warning("scoring batch of job %s: %s; retrying", job_id, error)
        raise self.retry(
            countdown=jobs.transient_retry_delay_s(self.request.retries),
            max_retries=jobs.TRANSIENT_RETRY_LIMIT,
        ) from error


def scoring_job_enqueue(
    *,
    study: Study,
    judge_name: str,
    device: str | None = None,
    batch_size: int = services.DEFAULT_BATCH_SIZE,
    chunk_size: int = services.DEFAULT_CHUNK_SIZE,
    created_by=None,
) -> BackgroundJob:
    """A BackgroundJob and one ``score_items_task`` per batch, queued after commit. A batch
    (one task) holds ``batch_size`` items, widened to the judge's configured model batch so
    the model's batches are never cut short; within a batch, judgments are stored every
    ``chunk_size`` items (kept in the job's params)."""

    if batch_size < 1 or chunk_size < 1:
        raise ValueError("batch_size and chunk_size must be at least 1")
    config = selectors.judge_config(study=study, judge_name=judge_name)  # fails early if unknown
    batch_size = max(batch_size, configured_batch_size(config))
    pks = selectors.item_pks(study=study)
    batches = [pks[i : i + batch_size] for i in range(0, len(pks), batch_size)]
    params = {
        "judge": judge_name,
        "judge_version": config["version"],
        "device": device,
        "batch_size": batch_size,
        "chunk_size": chunk_size,
        "batches": len(batches),
        "queue": services.scoring_queue(config),
    }
    with transaction.atomic():
        job = jobs.job_create(
            kind=selectors.SCORING_JOB_KIND, study=study, params=params, created_by=created_by
        )
        jobs.job_progress(job_id=job.pk, done=0, total=len(pks))
        ScoringBatch.objects.bulk_create(
            [ScoringBatch(job=job, index=i, item_ids=ids) for i, ids in enumerate(batches)]
        )
        if not batches:
            jobs.job_finish(job_id=job.pk, message="The study has no items to score.")
        send = partial(score_items_task.apply_async, queue=params["queue"])
        for ids in batches:
            transaction.on_commit(partial(send, (job.pk, study.pk, judge_name, ids, device)))
    job.refresh_from_db()
    return job

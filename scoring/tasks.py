"""Celery tasks of the scoring app (queue "gpu", see CELERY_TASK_ROUTES): ids in, one service call.

Acknowledged late and rejected (so redelivered) if the worker dies: a batch that was cut off
is scored again, and the unique (item, judge, version) judgment keeps that from duplicating
anything; a batch interrupted by a database restart is retried with the same arguments.
The judge is loaded once per worker process (``services.judge_load``). Judges that only call
an HTTP API go to ACRB_API_QUEUE instead (``services.scoring_queue``).
"""

from __future__ import annotations

import logging

from celery import shared_task

from annotations.common import jobs

from . import services

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
        services.scoring_batch_run(job_id=job_id, study_id=study_id, judge_name=judge_name,
                                   item_ids=item_ids, device=device)  # fmt: skip
    except jobs.TRANSIENT_DATABASE_ERRORS as error:
        logger.warning("scoring batch of job %s: %s; retrying", job_id, error)
        raise self.retry(
            countdown=jobs.transient_retry_delay_s(self.request.retries),
            max_retries=jobs.TRANSIENT_RETRY_LIMIT,
        ) from error

"""Celery tasks of the scoring app (queue "gpu", see CELERY_TASK_ROUTES): ids in, one service call.

Acknowledged late and rejected (so redelivered) if the worker dies: a batch that was cut off
is scored again, and the unique (item, judge, version) judgment keeps that from duplicating
anything. The judge is loaded once per worker process (``services.judge_load``).
"""

from __future__ import annotations

from celery import shared_task

from . import services


@shared_task(acks_late=True, reject_on_worker_lost=True)
def score_items_task(
    job_id: int, study_id: int, judge_name: str, item_ids: list[int], device: str | None = None
) -> None:
    services.scoring_batch_run(
        job_id=job_id, study_id=study_id, judge_name=judge_name, item_ids=item_ids, device=device
    )

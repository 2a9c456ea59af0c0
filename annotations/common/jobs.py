"""Background-job bookkeeping: the rows the staff UI polls while a Celery task runs."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable

from django.db import InterfaceError, OperationalError
from django.utils import timezone

from annotations.models import BackgroundJob

logger = logging.getLogger(__name__)

# A database that restarts or drops a connection raises these; the work is not wrong, only
# interrupted. Tasks retry on them (same arguments, idempotent) instead of failing their job.
TRANSIENT_DATABASE_ERRORS = (OperationalError, InterfaceError)
TRANSIENT_RETRY_LIMIT = 30

# A long service reports (done, total) through this callback: a job row, a progress bar or None.
Progress = Callable[[int, int], None] | None


def transient_retry_delay_s(retries: int) -> float:
    """Seconds before retry number ``retries + 1``: 1, 2, 4 … capped at 30 (a restart)."""
    return float(min(30, 2**retries))


def job_create(
    *, kind: str, study=None, params: dict | None = None, created_by=None
) -> BackgroundJob:
    return BackgroundJob.objects.create(
        kind=kind, study=study, params=params or {}, created_by=created_by
    )


def job_finished(*, job_id: int) -> bool:
    """Has the job succeeded or failed already? A task delivered again (``acks_late``) then
    has nothing left to do."""
    return BackgroundJob.objects.filter(
        pk=job_id, status__in=[BackgroundJob.Status.SUCCEEDED, BackgroundJob.Status.FAILED]
    ).exists()


def job_start(*, job_id: int, total: int = 0) -> None:
    BackgroundJob.objects.filter(pk=job_id).update(
        status=BackgroundJob.Status.RUNNING, total=total, done=0
    )


def job_progress(*, job_id: int, done: int, total: int | None = None) -> None:
    fields = {"done": done}
    if total is not None:
        fields["total"] = total
    BackgroundJob.objects.filter(pk=job_id).update(**fields)


def job_finish(
    *, job_id: int, message: str = "", errors: list | None = None, result: dict | None = None
) -> None:
    """Mark the job done; ``result`` (e.g. the id of what it created) is kept in its params."""
    status = BackgroundJob.Status.FAILED if errors else BackgroundJob.Status.SUCCEEDED
    if result:
        job = BackgroundJob.objects.get(pk=job_id)
        BackgroundJob.objects.filter(pk=job_id).update(params={**job.params, "result": result})
    BackgroundJob.objects.filter(pk=job_id).update(
        status=status, message=message, errors=errors or [], finished_at=timezone.now()
    )


@contextlib.contextmanager
def job_fails_with_its_message(*, job_id: int, message: str):
    """Around a task's work: an unexpected error ends the job as failed, with the error's one
    line (the traceback goes to the worker's log), instead of leaving it "running" forever.
    Transient database errors pass through, for the task's retry."""
    try:
        yield
    except TRANSIENT_DATABASE_ERRORS:
        raise
    except Exception as exc:
        logger.exception("background job %s failed", job_id)
        first_line = (str(exc).strip().splitlines() or [""])[0][:500]
        job_finish(job_id=job_id, message=message, errors=[f"{type(exc).__name__}: {first_line}"])

"""Reads of a study's design validations: the latest finished result and the open job."""

from __future__ import annotations

from annotations.models import BackgroundJob, Study

DESIGN_VALIDATION_JOB_KIND = "validate_design"
OPEN = (BackgroundJob.Status.QUEUED, BackgroundJob.Status.RUNNING)


def design_validation_state(*, study: Study) -> dict:
    """``{"open": the queued or running job or None, "latest": the latest finished job or None}``
    (two queries)."""
    mine = BackgroundJob.objects.filter(study=study, kind=DESIGN_VALIDATION_JOB_KIND)
    return {
        "open": mine.filter(status__in=OPEN).first(),
        "latest": mine.exclude(status__in=OPEN).first(),
    }

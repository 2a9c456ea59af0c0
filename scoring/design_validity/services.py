"""Start and run a study's design validation; the result is kept in its BackgroundJob
(``params["result"]``, as every job keeps what it produced): no table of its own, and the page
shows the latest finished job's result."""

from __future__ import annotations

from django.db import transaction

from annotations.common import jobs
from annotations.models import BackgroundJob, Study
from scoring.design_validity.selectors import DESIGN_VALIDATION_JOB_KIND, OPEN
from scoring.metrics.document import study_metric_frames
from scoring.stats.validity.study_design import validate_study_design


def design_validation_create(
    *, study: Study, replications: int, seed: int, created_by=None
) -> tuple[BackgroundJob, bool]:
    """``(job, created)``: a queued validation job of the study, or the one already queued or
    running (a second click or a retried POST starts nothing new). The study row is locked while
    checking, so two requests cannot both create one."""
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).first()
        open_job = BackgroundJob.objects.filter(
            study=study, kind=DESIGN_VALIDATION_JOB_KIND, status__in=OPEN
        ).first()
        if open_job is not None:
            return open_job, False
        job = jobs.job_create(
            kind=DESIGN_VALIDATION_JOB_KIND,
            study=study,
            params={"replications": replications, "seed": seed},
            created_by=created_by,
        )
    return job, True


def design_validation_run(*, job_id: int, progress: jobs.Progress = None) -> dict:
    """Run the job: the study's frames (the metrics document's, pooled labels) through
    ``validate_study_design``; progress (scenarios done, total) goes to the job row and to
    ``progress``. The job ends succeeded with the verdict as its message, whatever the verdict."""
    job = BackgroundJob.objects.select_related("study").get(pk=job_id)
    jobs.job_start(job_id=job_id)
    with jobs.job_fails_with_its_message(job_id=job_id, message="The design was not validated."):
        annotations, judgments = study_metric_frames(study=job.study)

        def report(done: int, total: int) -> None:
            jobs.job_progress(job_id=job_id, done=done, total=total)
            if progress:
                progress(done, total)

        result = validate_study_design(
            annotations,
            judgments,
            replications=job.params["replications"],
            seed=job.params["seed"],
            progress=report,
        )
        jobs.job_finish(job_id=job_id, message=result["verdict_text"], result=result)
        return result

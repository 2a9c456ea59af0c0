"""Score a study with one configured judge: queued (on "gpu", or ACRB_API_QUEUE for API judges), or inline."""

import time

from django.core.management.base import CommandError
from tqdm import tqdm

from annotations.management.helpers import TIMEOUT, BaseCommand, bounded_int, study_or_error
from annotations.models import BackgroundJob
from scoring import services, tasks
from scoring.selectors import JudgeNotConfigured

FINISHED = (BackgroundJob.Status.SUCCEEDED, BackgroundJob.Status.FAILED)


class Command(BaseCommand):
    help = "Score every item of a study with a judge configured in ACRB_JUDGES (docs/judges.md)."

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True, help="study slug")
        parser.add_argument(
            "--judge", required=True, help="a name under judges: in ACRB_BACKENDS_FILE"
        )
        parser.add_argument(
            "--device", choices=["cpu", "cuda"], help="override the config's device"
        )
        parser.add_argument(
            "--inline", action="store_true", help="score in this process (no worker)"
        )
        parser.add_argument(
            "--batch-size",
            type=bounded_int(1, 100_000),
            default=services.DEFAULT_BATCH_SIZE,
            help="items per Celery task",
        )
        parser.add_argument(
            "--timeout",
            type=TIMEOUT,
            default=None,
            help=f"seconds to wait for the job ({TIMEOUT.range})",
        )

    def handle(self, *args, study, judge, device, inline, batch_size, timeout, **options):
        study = study_or_error(study)
        try:
            if inline:
                self._inline(study, judge, device)
            else:
                self._queued(study, judge, device, batch_size, timeout)
        except JudgeNotConfigured as exc:
            raise CommandError(str(exc)) from None

    def _inline(self, study, judge, device):
        with tqdm(desc=f"scoring with {judge}", unit="item", disable=None) as bar:

            def progress(done, total):
                bar.total, bar.n = total, done
                bar.refresh()

            summary = services.study_score(
                study=study, judge_name=judge, device=device, progress=progress
            )
        self.stdout.write(
            f"{summary.judge}@{summary.judge_version}: {summary.items} items, {summary.errors} errors, "
            f"{summary.invalid} invalid answers, {summary.cached} from the cache, "
            f"{summary.needs_review} flagged for review; labels {dict(summary.labels)}"
        )

    def _queued(self, study, judge, device, batch_size, timeout):
        job = tasks.scoring_job_enqueue(
            study=study, judge_name=judge, device=device, batch_size=batch_size
        )
        self.stdout.write(
            f"Job #{job.pk}: {job.params['batches']} batches queued on the "
            f"'{job.params['queue']}' queue."
        )
        deadline = None if timeout is None else time.monotonic() + timeout
        with tqdm(total=job.total, desc=f"scoring with {judge}", unit="item", disable=None) as bar:
            while job.status not in FINISHED:
                if deadline is not None and time.monotonic() > deadline:
                    raise CommandError(
                        f"job #{job.pk} still {job.status} after {timeout} s (is a worker on -Q gpu running?)"
                    )
                time.sleep(1.0)
                job.refresh_from_db()
                bar.n = job.done
                bar.refresh()
        if job.status == BackgroundJob.Status.FAILED:
            raise CommandError(f"job #{job.pk} failed: {job.message} {'; '.join(job.errors)}")
        self.stdout.write(self.style.SUCCESS(job.message))

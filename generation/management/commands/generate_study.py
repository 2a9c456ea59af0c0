"""Stage II: make a study's missing images, on the GPU queue (default) or in this process."""

import time

from django.core.management.base import CommandError
from tqdm import tqdm

from annotations.management.helpers import TIMEOUT, BaseCommand, bounded_int, study_or_error
from generation import selectors, services, tasks


class Command(BaseCommand):
    help = (
        "Generate every planned image of a study that is not there yet. Exits 0 only when every "
        "request is done or recorded as refused or error; a rerun fills the gaps."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True)
        parser.add_argument(
            "--inline", action="store_true", help="run here, without a Celery worker"
        )
        parser.add_argument(
            "--generator",
            action="append",
            default=[],
            help="attach this configured generator first",
        )
        parser.add_argument("--seeds", default="0", help="seeds for --generator, e.g. 0,1")
        parser.add_argument(
            "--chunk-size",
            type=bounded_int(1, 100_000),
            help="requests per task (default: per generator)",
        )
        parser.add_argument(
            "--timeout", type=TIMEOUT, default=24 * 3600, help="seconds to wait for the workers"
        )

    def handle(self, *args, study, inline, chunk_size, timeout, **options):
        record = study_or_error(study)
        seeds = [int(seed) for seed in options["seeds"].split(",") if seed.strip()]
        try:
            for name in options["generator"]:
                services.study_generator_attach(study=record, name=name, seeds=seeds)
        except ValueError as error:
            raise CommandError(str(error)) from error
        if not record.generators.exists():
            raise CommandError(
                "the study has no generator: pass --generator NAME (see ACRB_GENERATORS)"
            )
        with tqdm(desc=f"generating {record.slug}", unit="img", disable=None) as bar:

            def progress(finished, total):
                bar.total = total
                bar.n = finished
                bar.refresh()

            if inline:
                services.generation_run_inline(
                    study=record, progress=progress, chunk_size=chunk_size
                )
            else:
                self._wait(
                    record,
                    tasks.generation_run(study=record, chunk_size=chunk_size),
                    progress,
                    timeout,
                )
        counts = selectors.generation_status_counts(study=record)
        self.stdout.write(counts.summary())
        for plan_id, error in counts.error_examples:
            self.stdout.write(f"  error {plan_id}: {error}")
        if counts.open:
            raise CommandError(
                f"{counts.open} requests are still pending or running; run the command again"
            )

    def _wait(self, record, job, progress, timeout):
        self.stdout.write(
            f"Queued as job #{job.pk}; waiting for the workers on "
            f"{', '.join(repr(q) for q in job.params.get('queues', ['gpu']))} "
            "(Ctrl-C leaves them running)."
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            counts = selectors.generation_status_counts(study=record)
            progress(counts.finished, counts.total)
            if not counts.open:
                return
            time.sleep(1.0)

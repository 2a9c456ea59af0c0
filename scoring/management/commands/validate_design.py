"""Is a study's design one its intervals and tests are calibrated for? The quick validity suite
at the study's own design (docs/metrics.md, "Validate your own design"): queued on the "default"
Celery queue, or --inline; the result is kept on the job and shown on the study page."""

import json
import time

from django.core.management.base import CommandError
from tqdm import tqdm

from annotations.management.helpers import (
    SEED,
    TIMEOUT,
    BaseCommand,
    bounded_int,
    output_file_or_error,
    study_or_error,
)
from annotations.models import BackgroundJob
from scoring.design_validity import services, tasks
from scoring.stats.validity.core import QUICK_REPLICATIONS
from scoring.stats.validity.design_verdict import CALIBRATED, CANNOT_VALIDATE, check_rows
from scoring.stats.validity.study_design import DEFAULT_SEED

MIN_REPLICATIONS, MAX_REPLICATIONS = 50, 5000
FINISHED = (BackgroundJob.Status.SUCCEEDED, BackgroundJob.Status.FAILED)


# Simulated studies per scenario: fewer cannot tell calibrated from not; more take hours.
REPLICATIONS = bounded_int(MIN_REPLICATIONS, MAX_REPLICATIONS)


class Command(BaseCommand):
    help = (
        "Simulate studies of this study's own design through the app's statistics and say "
        "whether its intervals and tests are calibrated for it (docs/metrics.md, 'Validate your "
        "own design'). Exit status 1 when not calibrated."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True, help="study slug")
        parser.add_argument(
            "--replications",
            type=REPLICATIONS,
            default=QUICK_REPLICATIONS,
            help=f"simulated studies per scenario, {MIN_REPLICATIONS} to {MAX_REPLICATIONS} "
            f"(default {QUICK_REPLICATIONS}, the quick mode: about a minute for the demo)",
        )
        parser.add_argument("--seed", type=SEED, default=DEFAULT_SEED)
        parser.add_argument("--json", dest="json_path", help="also write the whole result here")
        parser.add_argument("--inline", action="store_true", help="run here (no worker)")
        parser.add_argument(
            "--timeout",
            type=TIMEOUT,
            default=None,
            help=f"seconds to wait for the queued job ({TIMEOUT.range})",
        )

    def handle(self, *args, study, replications, seed, json_path, inline, timeout, **options):
        out = output_file_or_error(json_path, option="--json") if json_path else None
        study = study_or_error(study)
        if inline:
            job, _ = services.design_validation_create(
                study=study, replications=replications, seed=seed
            )
            if job.status == BackgroundJob.Status.RUNNING:  # a worker has it: wait for it
                job = self._wait(job, timeout)
            else:
                with tqdm(desc="scenarios", unit="scenario", disable=None) as bar:
                    services.design_validation_run(job_id=job.pk, progress=_bar(bar))
                job.refresh_from_db()
        else:
            job = tasks.design_validation_enqueue(study=study, replications=replications, seed=seed)
            job = self._wait(job, timeout)
        if job.status == BackgroundJob.Status.FAILED:
            raise CommandError(f"job #{job.pk} failed: {job.message} {'; '.join(job.errors)}")
        result = job.params["result"]
        if out is not None:
            try:
                out.write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8")
            except OSError as error:
                raise CommandError(f"cannot write {out}: {error.strerror or error}") from None
        self._table(result)
        if result["verdict"] != CALIBRATED:
            raise CommandError(result["verdict_text"])
        self.stdout.write(self.style.SUCCESS(result["verdict_text"]))

    def _wait(self, job, timeout):
        self.stdout.write(
            f"Job #{job.pk} {job.status} on the 'default' queue ({job.params['replications']} "
            f"replications, seed {job.params['seed']})."
        )
        deadline = None if timeout is None else time.monotonic() + timeout
        with tqdm(desc="scenarios", unit="scenario", disable=None) as bar:
            while job.status not in FINISHED:
                if deadline is not None and time.monotonic() > deadline:
                    raise CommandError(
                        f"job #{job.pk} still {job.status} after {timeout} s (is a worker on "
                        "-Q default running? --inline runs without one)"
                    )
                time.sleep(1.0)
                job.refresh_from_db()
                _bar(bar)(job.done, job.total)
        return job

    def _table(self, result: dict) -> None:
        rows = check_rows(result)
        if rows:
            width = max(len(row["scenario"]) for row in rows)
            self.stdout.write(
                f"{'statistic':<14}  {'scenario':<{width}}  {'measures':<8}  {'rate':>5}  "
                f"{'target':<6}  ok"
            )
        for row in rows:
            rate = "—" if row["rate"] is None else f"{row['rate']:.3f}"
            ok = "n/a" if row["ok"] is None else ("yes" if row["ok"] else "NO")
            self.stdout.write(
                f"{row['statistic']:<14}  {row['scenario']:<{width}}  {row['measures']:<8}  "
                f"{rate:>5}  {row['target']:<6}  {ok}"
            )
        self.stdout.write(result["settings"]["note"])
        for reason in result["verdict_reasons"] if result["verdict"] != CANNOT_VALIDATE else []:
            self.stdout.write(f"- {reason}")
        for check in result["not_measured"]:
            self.stdout.write(f"n/a: {check['reason']}")


def _bar(bar):
    def progress(done, total):
        bar.total, bar.n = total, done
        bar.refresh()

    return progress

from pathlib import Path

from django.core.management.base import BaseCommand

from annotations.exports import render_metrics
from annotations.management.helpers import study_or_error
from scoring.metrics import metrics_document


class Command(BaseCommand):
    help = "Write a study's validated metrics (rates, CIs, agreement; docs/metrics.md) as JSON."

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True)
        parser.add_argument("--out", type=Path, required=True)
        parser.add_argument(
            "--bootstrap", type=int, default=2000, help="bootstrap resamples for CIs of differences"
        )
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, *args, study, out, bootstrap, seed, **options):
        document = metrics_document(study=study_or_error(study), n_bootstrap=bootstrap, seed=seed)
        Path(out).write_text(render_metrics(document), encoding="utf-8")
        self.stdout.write(self.style.SUCCESS(f"wrote {out}"))

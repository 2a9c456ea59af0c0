from pathlib import Path

from django.core.management.base import CommandError

from annotations.exports.writers import render_metrics
from annotations.management.helpers import (
    RESAMPLES,
    SEED,
    BaseCommand,
    output_file_or_error,
    study_or_error,
)
from scoring.metrics.document import DEFAULT_LABEL_MODELS, metrics_document
from scoring.stats.bootstrap import DEFAULT_N_RESAMPLES
from scoring.stats.label_models import METHODS
from scoring.stats.label_sources import LABEL_SOURCES, POOLED


def _label_models(text: str) -> tuple[str, ...]:
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    if names == ("none",):
        return ()
    unknown = [name for name in names if name not in METHODS]
    if unknown:
        raise CommandError(
            f"unknown label model(s) {', '.join(unknown)}; use any of {', '.join(METHODS)} or none"
        )
    return names


class Command(BaseCommand):
    help = "Write a study's validated metrics (rates, CIs, agreement; docs/metrics.md) as JSON."

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True)
        parser.add_argument("--out", type=Path, required=True)
        parser.add_argument(
            "--resamples",
            "--bootstrap",  # the earlier spelling, still accepted
            dest="n_resamples",
            type=RESAMPLES,
            default=DEFAULT_N_RESAMPLES,
            help=f"cluster-bootstrap resamples for Δ and ratio CIs, {RESAMPLES.range} "
            f"(default {DEFAULT_N_RESAMPLES})",
        )
        parser.add_argument("--seed", type=SEED, default=0)
        parser.add_argument(
            "--label-models",
            default=",".join(DEFAULT_LABEL_MODELS),
            help="comma-separated label models for the aggregation and sensitivity sections "
            f"({', '.join(METHODS)}), or none",
        )

        parser.add_argument(
            "--labels",
            default=POOLED,
            choices=LABEL_SOURCES,
            help="which labels the metrics use (docs/metrics.md, 'Label sources'; default pooled)",
        )

    def handle(self, *args, study, out, n_resamples, seed, label_models, labels, **options):
        out = output_file_or_error(out)  # before the computing, not after
        target = study_or_error(study)
        models = _label_models(label_models)
        document = metrics_document(
            study=target,
            n_resamples=n_resamples,
            seed=seed,
            label_models=models,
            labels=labels,
        )
        try:
            out.write_text(render_metrics(document), encoding="utf-8")
        except OSError as error:
            raise CommandError(f"cannot write {out}: {error.strerror or error}") from None
        self.stdout.write(self.style.SUCCESS(f"wrote {out}"))

import json
from pathlib import Path

from django.core.management.base import CommandError

from annotations.management.helpers import (
    RESAMPLES,
    SEED,
    BaseCommand,
    output_file_or_error,
    study_or_error,
)
from scoring.comparison.selectors import ComparisonError, comparison_document, comparison_inputs
from scoring.stats.bootstrap import DEFAULT_N_RESAMPLES


class Command(BaseCommand):
    help = (
        "Write models side by side as JSON (docs/report.md, 'Models side by side'): one --study "
        "compares its generators, two or more compare the studies; the change from --baseline "
        "to --candidate (default: the first two in name order)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", action="append", required=True, dest="studies")
        parser.add_argument("--out", type=Path, required=True)
        parser.add_argument("--baseline", help="model A: a generator, or a study's slug")
        parser.add_argument("--candidate", help="model B: a generator, or a study's slug")
        parser.add_argument(
            "--source",
            action="append",
            dest="sources",
            help="keep this label source only (human, auto:<judge>); repeat for more",
        )
        parser.add_argument(
            "--resamples",
            dest="n_resamples",
            type=RESAMPLES,
            default=DEFAULT_N_RESAMPLES,
            help=f"cluster-bootstrap resamples, {RESAMPLES.range} (default {DEFAULT_N_RESAMPLES})",
        )
        parser.add_argument("--seed", type=SEED, default=0)

    def handle(self, *args, studies, out, baseline, candidate, sources, n_resamples, seed, **_):
        out = output_file_or_error(out)
        targets = [study_or_error(slug) for slug in studies]
        try:
            inputs = comparison_inputs(studies=targets)
            document = comparison_document(
                inputs,
                baseline=baseline,
                candidate=candidate,
                sources=sources,
                n_resamples=n_resamples,
                seed=seed,
            )
        except ComparisonError as error:
            raise CommandError(str(error)) from None
        text = json.dumps(document, indent=2, allow_nan=False, ensure_ascii=False)
        try:
            out.write_text(text + "\n", encoding="utf-8")
        except OSError as error:
            raise CommandError(f"cannot write {out}: {error.strerror or error}") from None
        section = document["models_side_by_side"]
        self.stdout.write(
            self.style.SUCCESS(
                f"wrote {out}: {', '.join(inputs.models)}; change "
                f"{section['baseline']} → {section['candidate']}"
            )
        )

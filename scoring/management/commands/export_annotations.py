from pathlib import Path

from django.core.management.base import CommandError

from annotations.exports import datasets as export_datasets
from annotations.exports import writers as export_writers
from annotations.management.helpers import SEED, BaseCommand, output_file_or_error, study_or_error
from scoring.metrics.document import aggregated_label_export
from scoring.stats.label_models import METHODS


# In scoring, not annotations: --aggregate fits the label models (scoring.stats), and the apps
# import one way (docs/architecture.md).
class Command(BaseCommand):
    help = (
        "Write a study's annotations (gold included, flagged), its automated judgments "
        "(--judgments) or one aggregated label per item (--aggregate) as CSV, JSONL or Parquet."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True)
        parser.add_argument("--format", choices=export_writers.FORMATS, default="csv")
        parser.add_argument("--out", type=Path, required=True)
        which = parser.add_mutually_exclusive_group()
        which.add_argument(
            "--aggregate",
            choices=METHODS,
            help="one row per item: item_id, hard_refusal, cue, posterior (docs/metrics.md)",
        )
        which.add_argument("--judgments", action="store_true", help="the automated judgments")
        parser.add_argument("--seed", type=SEED, default=0, help="seed of the MACE initialisation")

    def handle(self, *args, study, format, out, aggregate, judgments, seed, **options):
        study = study_or_error(study)
        out = output_file_or_error(out)
        if aggregate:
            dataset = aggregated_label_export(study=study, method=aggregate, seed=seed)
        elif judgments:
            dataset = export_datasets.judgment_export(study=study)
        else:
            dataset = export_datasets.annotation_export(study=study)
        try:
            body = export_writers.writer_for(format).write(dataset)
        except ValueError as exc:
            raise CommandError(f"nothing written: {exc}") from exc
        try:
            out.write_bytes(body)
        except OSError as exc:
            raise CommandError(f"cannot write {out}: {exc.strerror}") from exc
        what = {"annotations": "annotations", "judgments": "judgments"}.get(
            dataset.name, f"item labels ({aggregate})"
        )
        line = f"wrote {len(dataset.rows)} {what} to {out}"
        if aggregate:
            unlabelled = sum(row["hard_refusal"] is None for row in dataset.rows)
            line += f"; {unlabelled} item(s) without a label (see the reason column)"
        self.stdout.write(self.style.SUCCESS(line))

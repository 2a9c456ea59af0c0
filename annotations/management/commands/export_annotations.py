from pathlib import Path

from django.core.management.base import BaseCommand

from annotations import exports
from annotations.management.helpers import study_or_error


class Command(BaseCommand):
    help = "Write every annotation of a study (gold included, flagged) as CSV or JSONL."

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True)
        parser.add_argument("--format", choices=sorted(exports.WRITERS), default="csv")
        parser.add_argument("--out", type=Path, required=True)

    def handle(self, *args, study, format, out, **options):
        rows = exports.annotation_dataset(study=study_or_error(study))
        Path(out).write_text(exports.render_annotations(rows, format), encoding="utf-8")
        self.stdout.write(self.style.SUCCESS(f"wrote {len(rows)} annotations to {out}"))

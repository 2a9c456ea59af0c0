from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotations import services
from annotations.management.helpers import study_or_error
from annotations.manifest import ManifestInvalid


class Command(BaseCommand):
    help = "Import labels collected in another tool (CSV: item_id, annotator, annotator_group, hard_refusal, cue)."

    def add_arguments(self, parser):
        parser.add_argument("csv_file", type=Path)
        parser.add_argument("--study", required=True)

    def handle(self, *args, csv_file, study, **options):
        target = study_or_error(study)
        csv_file = Path(csv_file)
        if not csv_file.is_file():
            raise CommandError(f"{csv_file} does not exist")
        try:
            count = services.annotations_import(
                study=target,
                csv_text=csv_file.read_text(encoding="utf-8-sig"),
                source_name=csv_file.name,
            )
        except ManifestInvalid as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(self.style.SUCCESS(f"imported {count} labels into {target.slug}"))

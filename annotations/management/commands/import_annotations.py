from pathlib import Path

from annotations.imports import importers
from annotations.imports.manifest import LabelsInvalid, ManifestInvalid, decode_utf8
from annotations.management.helpers import BaseCommand, file_error, study_or_error


class Command(BaseCommand):
    help = (
        "Import labels collected in another tool "
        "(UTF-8 CSV: item_id, annotator, annotator_group, hard_refusal, cue); all or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("csv_file", type=Path)
        parser.add_argument("--study", required=True)
        parser.add_argument(
            "--create-annotators",
            action="store_true",
            help="create accounts (without a password) for annotator names the app does not "
            "know; without it such a file is refused and the names listed",
        )
        parser.add_argument(
            "--allow-staff-annotators",
            action="store_true",
            help="import labels under staff accounts' names (they get an annotator profile); "
            "without it such a file is refused and the names listed",
        )

    def handle(self, *args, csv_file, study, create_annotators, allow_staff_annotators, **options):
        target = study_or_error(study)
        csv_file = Path(csv_file)
        if not csv_file.is_file():
            raise file_error(str(csv_file), "no such file")
        try:
            count = importers.annotations_import(
                study=target,
                csv_text=decode_utf8(csv_file.read_bytes()),
                source_name=csv_file.name,
                create_annotators=create_annotators,
                allow_staff_annotators=allow_staff_annotators,
            )
        except LabelsInvalid as exc:
            remedied = exc.with_remedies(
                unknown="pass --create-annotators to create them",
                staff="pass --allow-staff-annotators to import their labels",
            )
            raise file_error(str(csv_file), remedied) from None
        except ManifestInvalid as exc:
            raise file_error(str(csv_file), exc) from None
        except OSError as exc:
            raise file_error(str(csv_file), exc.strerror or exc) from None
        self.stdout.write(self.style.SUCCESS(f"imported {count} labels into {target.slug}"))

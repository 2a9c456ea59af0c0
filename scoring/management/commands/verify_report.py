from pathlib import Path

from django.core.management.base import CommandError

from annotations.management.helpers import BaseCommand
from scoring.report import bundle
from scoring.report.verify import verify_folder


class Command(BaseCommand):
    help = (
        "Recompute every number of DIR/report.json from the raw data in DIR and check every "
        "SHA-256 of DIR/manifest.json (docs/report.md, 'Verifying a report'). Needs no database; "
        "python -m scoring.report.verify DIR does the same without Django."
    )
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("folder", type=Path, help="a folder written by audit_report --out")

    def handle(self, *args, folder, **options):
        try:
            mismatches, notes = verify_folder(folder)
        except bundle.FolderError as error:
            raise CommandError(str(error)) from None
        for line in [*notes, *mismatches]:
            self.stdout.write(line)
        if mismatches:
            raise CommandError(f"FAILED: {len(mismatches)} mismatch(es) in {folder}")
        self.stdout.write(
            self.style.SUCCESS(f"OK: every hash and every number of {folder}/report.json match")
        )

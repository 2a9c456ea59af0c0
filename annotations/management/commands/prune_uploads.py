"""Remove upload folders nobody came back for (docs/deployment.md, "Upload folders")."""

from pathlib import Path

from django.conf import settings

from annotations.imports.uploads import UPLOADS_KEPT_SECONDS, uploads_prune
from annotations.management.helpers import BaseCommand, bounded_float


class Command(BaseCommand):
    help = (
        "Remove the upload folders under VAR_DIR/uploads (an items import, a replaced image, a "
        "new study checked but never created) older than --hours (default 24). Run it daily, "
        "e.g. from cron; checking a new study also prunes them."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--hours",
            type=bounded_float(1, 24 * 365),
            default=UPLOADS_KEPT_SECONDS / 3600,
            help="remove folders last changed more than this many hours ago (1 to 8,760)",
        )

    def handle(self, *args, hours, **options):
        root = Path(settings.VAR_DIR) / "uploads"
        removed = uploads_prune(root, older_than_s=hours * 3600)
        self.stdout.write(f"removed {len(removed)} upload folder(s) older than {hours:g} h")

"""python manage.py import_biographies FILE.jsonl --set NAME [--occupation NAME]"""

from django.core.management.base import CommandError

from annotations.management.helpers import BaseCommand
from scoring.reflect import services
from scoring.reflect.biographies import BiographyFileError

from ._common import face_set_or_error


class Command(BaseCommand):
    help = "Import salary-task biographies (JSONL: id, text, occupation); leakage is flagged."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", help="JSONL files, e.g. one per occupation")
        parser.add_argument("--set", dest="name", required=True)
        parser.add_argument("--occupation", help="occupation of every line that names none")
        parser.add_argument("--names", default="", help="comma-separated extra names to flag")

    def handle(self, *args, **options):
        face_set = face_set_or_error(options["name"])
        names = [n.strip() for n in options["names"].split(",") if n.strip()]
        for path in options["files"]:
            try:
                counts = services.biographies_import(
                    face_set=face_set,
                    path=path,
                    occupation=options["occupation"],
                    extra_names=names,
                )
            except (BiographyFileError, OSError) as error:
                raise CommandError(f"{path}: nothing was imported. {error}") from error
            self.stdout.write(
                f"{path}: {counts['read']} read, {counts['created']} new, "
                f"{counts['flagged']} flagged for demographic leakage (not used)"
            )

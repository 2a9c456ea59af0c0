"""python manage.py import_biographies FILE.jsonl --set NAME [--occupation NAME]"""

from django.core.management.base import CommandError

from annotations.management.helpers import BaseCommand
from scoring.reflect import services
from scoring.reflect.biographies import BiographyFileError

from ._common import face_set_or_error


class Command(BaseCommand):
    help = (
        "Import salary-task biographies (JSONL: id, text, occupation), every file or none; "
        "leakage is flagged."
    )

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", help="JSONL files, e.g. one per occupation")
        parser.add_argument("--set", dest="name", required=True)
        parser.add_argument("--occupation", help="occupation of every line that names none")
        parser.add_argument("--names", default="", help="comma-separated extra names to flag")

    def handle(self, *args, **options):
        face_set = face_set_or_error(options["name"])
        names = [n.strip() for n in options["names"].split(",") if n.strip()]
        try:
            counts = services.biographies_import_files(
                face_set=face_set,
                paths=options["files"],
                occupation=options["occupation"],
                extra_names=names,
            )
        except BiographyFileError as error:
            raise CommandError(f"{error.path}: nothing was imported. {error}") from None
        except OSError as error:
            shown = error.filename or ""
            raise CommandError(
                f"{shown}: nothing was imported. {error.strerror or error}"
            ) from None
        for path, count in counts.items():
            self.stdout.write(
                f"{path}: {count['read']} read, {count['created']} new, "
                f"{count['flagged']} flagged for demographic leakage (not used)"
            )

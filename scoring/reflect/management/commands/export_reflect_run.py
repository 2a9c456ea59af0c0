"""python manage.py export_reflect_run --set NAME [--model LABEL] --out answers.jsonl"""

from django.core.management.base import CommandError

from annotations.management.helpers import BaseCommand, output_file_or_error
from scoring.reflect import selectors
from scoring.reflect.dump import write_dump

from ._common import face_set_or_error


class Command(BaseCommand):
    help = "Dump every stored answer (prompt, model, decoding, raw answer, timing) as JSONL."

    def add_arguments(self, parser):
        parser.add_argument("--set", dest="name", required=True)
        parser.add_argument("--model", help="one run's label (the report's model key)")
        parser.add_argument("--out", required=True)

    def handle(self, *args, **options):
        output_file_or_error(options["out"])
        face_set = face_set_or_error(options["name"])
        run = None
        if options["model"]:
            run = face_set.runs.filter(label=options["model"]).first()
            if run is None:
                known = ", ".join(face_set.runs.values_list("label", flat=True)) or "none"
                raise CommandError(f"no run {options['model']!r} on this set (runs: {known})")
        count = write_dump(selectors.answer_rows(face_set=face_set, run=run), options["out"])
        self.stdout.write(self.style.SUCCESS(f"wrote {count} answers to {options['out']}"))

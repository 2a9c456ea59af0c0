"""python manage.py reflect_report --set NAME --out DIR  (or --answers DUMP.jsonl ...)"""

import json

from django.core.management.base import BaseCommand, CommandError

from scoring.reflect import reports
from scoring.reflect.dump import read_dump
from scoring.reflect.figures import write_report_bundle
from scoring.stats.bootstrap import DEFAULT_N_RESAMPLES

from ._common import face_set_or_error


class Command(BaseCommand):
    help = "Write DIR/report.json, the tables as CSV and the figures (PNG, SVG, data CSV)."

    def add_arguments(self, parser):
        parser.add_argument("--set", dest="name", help="face set whose stored answers to analyse")
        parser.add_argument(
            "--answers", nargs="+", help="answer dumps (JSONL) instead of the database"
        )
        parser.add_argument("--out", required=True)
        parser.add_argument(
            "--resamples",
            type=int,
            default=DEFAULT_N_RESAMPLES,
            help=f"bootstrap resamples (0: none; default {DEFAULT_N_RESAMPLES})",
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--no-figures", action="store_true", help="report.json and CSV tables only"
        )

    def handle(self, *args, **options):
        if bool(options["name"]) == bool(options["answers"]):
            raise CommandError("give --set NAME or --answers DUMP.jsonl")
        common = {"n_resamples": options["resamples"], "seed": options["seed"]}
        try:
            if options["answers"]:
                rows = [row for path in options["answers"] for row in read_dump(path)]
                report = reports.report_from_rows(rows, source=options["answers"], **common)
            else:
                face_set = face_set_or_error(options["name"])
                report = reports.report_compute(face_set=face_set, **common)
        except (OSError, ValueError) as error:
            # e.g. two dumps whose runs share a model name: the same questions twice
            raise CommandError(f"no report written: {error}") from error
        written = write_report_bundle(report, options["out"], figures=not options["no_figures"])
        models = ", ".join(sorted(report.get("models", {}))) or "no answers yet"
        self.stdout.write(
            self.style.SUCCESS(f"wrote {len(written)} files to {options['out']} ({models})")
        )
        if options["verbosity"] > 1:
            self.stdout.write(json.dumps(report.get("discard_table", {}), indent=1))

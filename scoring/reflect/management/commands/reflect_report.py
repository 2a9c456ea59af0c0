"""python manage.py reflect_report --set NAME --out DIR  (or --answers DUMP.jsonl ...)"""

import sys
import time
from pathlib import Path

from django.core.management.base import CommandError

from annotations.management.helpers import RESAMPLES, SEED, BaseCommand, bounded_int
from scoring.reflect.dump import read_dump
from scoring.reflect.page_figures import write_report_bundle
from scoring.report import bundle, pdf
from scoring.report.folder import add_format_argument, write_report_folder
from scoring.report.inputs import reflect_inputs
from scoring.report.legal import system_kinds
from scoring.report.pdf import PdfRendererMissing
from scoring.report.reflect.dataset import DEFAULT_SETTINGS, dump_context
from scoring.stats.bootstrap import DEFAULT_N_RESAMPLES

from ._common import face_set_or_error


class Command(BaseCommand):
    help = (
        "Write a REFLECT audit report (docs/report.md, docs/reflect.md): DIR/report.html "
        "(self-contained; executive summary, legal mapping, figures), DIR/report.json, with "
        "--format pdf DIR/report.pdf, every answer under DIR/data, the tables as CSV, the "
        "figures as PNG/SVG and DIR/manifest.json (SHA-256 hashes; check with verify_report DIR)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--set", dest="name", help="face set whose stored answers to analyse")
        parser.add_argument(
            "--answers", nargs="+", help="answer dumps (JSONL) instead of the database"
        )
        parser.add_argument("--out", required=True, type=Path)
        parser.add_argument(
            "--resamples",
            type=RESAMPLES,
            default=DEFAULT_N_RESAMPLES,
            help=f"bootstrap resamples, {RESAMPLES.range} (0: none; default {DEFAULT_N_RESAMPLES})",
        )
        parser.add_argument("--seed", type=SEED, default=0)
        parser.add_argument(
            "--min-n",
            type=bounded_int(1, 1_000_000),
            default=DEFAULT_SETTINGS["min_n"],
            help="blocks with fewer kept comparisons or valid answers are listed as limitations",
        )
        add_format_argument(parser)
        parser.add_argument(
            "--system-kind",
            choices=sorted(system_kinds()),
            help="what the audited system is, for the legal mapping (default: high_risk, "
            "as REFLECT's tasks are hiring and pay decisions)",
        )
        parser.add_argument("--intended-purpose", default="", help="the provider's own words")
        parser.add_argument(
            "--no-figures", action="store_true", help="no figures (in the HTML or as files)"
        )

    def handle(self, *args, **options):
        if bool(options["name"]) == bool(options["answers"]):
            raise CommandError("give --set NAME or --answers DUMP.jsonl")
        if options["output_format"] == "pdf":
            try:
                pdf.check_renderer()  # fail before the resampling, not after
            except PdfRendererMissing as error:
                raise CommandError(str(error)) from None
        started = time.perf_counter()
        common = {
            "n_resamples": options["resamples"],
            "seed": options["seed"],
            "min_n": options["min_n"],
            "system_kind": options["system_kind"],
            "intended_purpose": options["intended_purpose"],
        }
        try:
            if options["answers"]:
                rows = [row for path in options["answers"] for row in read_dump(path)]
                context = dump_context(rows, sources=options["answers"], **common)
                inputs = {"reflect": {"answers": rows, "context": context}}
            else:
                face_set = face_set_or_error(options["name"])
                inputs = {"reflect": reflect_inputs(face_set=face_set, **common)}
            report = bundle.report_from_inputs(inputs)
        except (OSError, ValueError) as error:
            # e.g. two dumps whose runs share a model name: the same questions twice
            raise CommandError(f"no report written: {error}") from error
        out = options["out"]
        figures = not options["no_figures"]
        try:
            write_report_folder(
                out,
                report,
                inputs,
                argv=sys.argv,
                seeds={"reflect": options["seed"]},
                output_format=options["output_format"],
                with_figures=figures,
                extra_files=lambda folder: write_report_bundle(
                    report["reflect"], folder, figures=figures
                ),
            )
        except PdfRendererMissing as error:
            raise CommandError(str(error)) from None
        models = ", ".join(sorted(report["reflect"]["models"])) or "no answers yet"
        self.stdout.write(
            self.style.SUCCESS(
                f"wrote the report, the answers and {out / bundle.MANIFEST} to {out} ({models}) "
                f"in {time.perf_counter() - started:.1f} s"
            )
        )

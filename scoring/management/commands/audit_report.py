import sys
import time
from pathlib import Path

from django.core.management.base import CommandError

from annotations.management.helpers import (
    RESAMPLES,
    SEED,
    BaseCommand,
    bounded_int,
    study_or_error,
)
from scoring.reflect.management.commands._common import face_set_or_error
from scoring.report import bundle, pdf
from scoring.report.dataset import DEFAULTS
from scoring.report.folder import add_format_argument, write_report_folder
from scoring.report.inputs import reflect_inputs, report_inputs
from scoring.report.pdf import PdfRendererMissing


def _reference(text: str) -> tuple[str, str]:
    attribute, _, value = text.partition("=")
    if not attribute or not value:
        raise CommandError(f"--reference takes ATTRIBUTE=VALUE, got {text!r}")
    return attribute, value


class Command(BaseCommand):
    help = (
        "Write a study's audit report (docs/report.md): DIR/report.html (self-contained), "
        "DIR/report.json (with --format pdf also DIR/report.pdf), the raw data under DIR/data and "
        "DIR/manifest.json (SHA-256 hashes; check with verify_report DIR). --reflect-set adds a "
        "REFLECT face set's results as one combined document."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True)
        parser.add_argument(
            "--out",
            type=Path,
            required=True,
            help="folder to write report.html and report.json into",
        )
        parser.add_argument(
            "--resamples",
            "--bootstrap",  # the earlier spelling, still accepted
            dest="n_resamples",
            type=RESAMPLES,
            default=DEFAULTS["n_resamples"],
            help=f"cluster-bootstrap resamples, {RESAMPLES.range}",
        )
        parser.add_argument(
            "--permutations",
            type=RESAMPLES,
            default=DEFAULTS["n_permutations"],
            help=f"permutations per Δ test, {RESAMPLES.range}",
        )
        add_format_argument(parser)
        parser.add_argument("--seed", type=SEED, default=DEFAULTS["seed"])
        parser.add_argument(
            "--min-n",
            type=bounded_int(1, 1_000_000),
            default=DEFAULTS["min_n"],
            help="rates below this n are listed as limitations",
        )
        parser.add_argument(
            "--reference",
            action="append",
            default=[],
            metavar="ATTRIBUTE=VALUE",
            help="regression reference value of an attribute type (default: its value with the most observations)",
        )
        parser.add_argument(
            "--reflect-set",
            "--reflect-face-set",
            dest="reflect_set",
            metavar="NAME_OR_SLUG",
            help="add the REFLECT part of this face set's runs: one document for both audits",
        )

    def handle(
        self,
        *args,
        study,
        out,
        n_resamples,
        permutations,
        seed,
        min_n,
        reference,
        output_format="html",
        reflect_set=None,
        **options,
    ):
        study = study_or_error(study)
        face_set = face_set_or_error(reflect_set) if reflect_set else None
        references = dict(_reference(text) for text in reference)
        if output_format == "pdf":
            try:
                pdf.check_renderer()  # fail before minutes of resampling, not after
            except PdfRendererMissing as error:
                raise CommandError(str(error)) from None
        started = time.perf_counter()
        settings = {
            "n_resamples": n_resamples,
            "n_permutations": permutations,
            "seed": seed,
            "min_n": min_n,
        }
        # The folder holds the report's inputs, so verify_report can recompute every number.
        inputs = report_inputs(study=study, references=references, **settings)
        if face_set is not None:
            inputs["reflect"] = reflect_inputs(
                face_set=face_set, n_resamples=n_resamples, seed=seed, min_n=min_n
            )
        report = bundle.report_from_inputs(inputs)
        seeds = {
            "report": seed,
            "batches": {b["name"]: b["seed"] for b in inputs["context"]["batches"]},
        }
        if face_set is not None:
            seeds["reflect"] = seed
        try:
            written = write_report_folder(
                out, report, inputs, argv=sys.argv, seeds=seeds, output_format=output_format
            )
        except PdfRendererMissing as error:
            raise CommandError(str(error)) from None
        seconds = time.perf_counter() - started
        names = ", ".join(str(path) for path in written)
        self.stdout.write(
            self.style.SUCCESS(
                f"wrote {names}, the raw data and {out / bundle.MANIFEST} in {seconds:.1f} s"
            )
        )

"""Write a report folder (docs/report.md, "Verifying a report"): report.json, the
self-contained report.html (and report.pdf), the report's inputs under ``data/`` and, last,
``manifest.json`` hashing every other file. The ``audit_report`` and ``reflect_report`` commands
both write through ``write_report_folder``, so a study report, a REFLECT report and a combined
one have the same layout and ``verify_report`` checks each the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from scoring.report import bundle, render
from scoring.report.document_types import is_audit_report
from scoring.report.pdf import html_to_pdf


def write_report_folder(
    out: Path,
    report: dict,
    inputs: dict,
    *,
    argv: list[str],
    seeds: dict,
    output_format: str = "html",
    with_figures: bool = True,
    extra_files: Callable[[Path], list[Path]] | None = None,
) -> list[Path]:
    """Every file of the folder; returns the report files written (json, html, pdf).
    ``extra_files(out)`` writes further files (e.g. CSV tables) before the manifest hashes them.
    ``PdfRendererMissing`` propagates (the command turns it into one line)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / bundle.REPORT).write_text(render.render_report_json(report), encoding="utf-8")
    html = render.render_report_html(report, with_figures=with_figures)
    (out / "report.html").write_text(html, encoding="utf-8")
    written = [out / "report.html", out / bundle.REPORT]
    if output_format == "pdf":
        (out / "report.pdf").write_bytes(html_to_pdf(html, title=render.report_title(report)))
        written.append(out / "report.pdf")
    bundle.write_inputs(out, inputs)
    if extra_files is not None:
        extra_files(out)
    settings = report["settings"] if is_audit_report(report) else report["reflect"]["settings"]
    # Last: the manifest hashes every file written above (the PDF too).
    bundle.write_manifest(out, argv=argv, settings=settings, seeds=seeds)
    return written


def add_format_argument(parser) -> None:
    """``--format html|pdf`` of the report commands (``audit_report``, ``reflect_report``)."""
    parser.add_argument(
        "--format",
        dest="output_format",
        choices=("html", "pdf"),
        default="html",
        help="pdf also prints report.html to report.pdf with headless Chromium",
    )

"""Write a report folder (docs/report.md, "Verifying a report"): report.json, the
self-contained report.html (and report.pdf), the report's inputs under ``data/`` and, last,
``manifest.json`` hashing every other file. The ``audit_report`` and ``reflect_report`` commands
both write through ``write_report_folder``, so a study report, a REFLECT report and a combined
one have the same layout and ``verify_report`` checks each the same way.

All or nothing: the files are written into a hidden temporary folder beside ``out`` and moved
into place only once every one of them (the manifest last) is written, so a command that fails
or is interrupted half-way leaves nothing behind, and an earlier report in ``out`` stays whole.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from scoring.report import bundle, pdf, render
from scoring.report.document_types import is_audit_report


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
    out = Path(out)
    final = out.resolve()
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{final.name}.partial-", dir=final.parent))
    staging.chmod(0o755)  # mkdtemp's 0700 would otherwise become the report folder's
    try:
        written = _write_files(
            staging,
            report,
            inputs,
            argv=argv,
            seeds=seeds,
            output_format=output_format,
            with_figures=with_figures,
            extra_files=extra_files,
        )
        _move_into_place(staging, final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [out / path.relative_to(staging) for path in written]


def _move_into_place(staging: Path, out: Path) -> None:
    """A new ``out`` is one rename. An existing one keeps its other files; each report file
    replaces its namesake (``data/`` as a whole), the manifest last."""
    if not out.exists():
        os.replace(staging, out)
        return
    names = sorted(p.name for p in staging.iterdir() if p.name != bundle.MANIFEST)
    for name in [*names, bundle.MANIFEST]:
        target = out / name
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        os.replace(staging / name, target)


def _write_files(
    out: Path,
    report: dict,
    inputs: dict,
    *,
    argv: list[str],
    seeds: dict,
    output_format: str,
    with_figures: bool,
    extra_files: Callable[[Path], list[Path]] | None,
) -> list[Path]:
    (out / bundle.REPORT).write_text(render.render_report_json(report), encoding="utf-8")
    html = render.render_report_html(report, with_figures=with_figures)
    (out / "report.html").write_text(html, encoding="utf-8")
    written = [out / "report.html", out / bundle.REPORT]
    if output_format == "pdf":
        (out / "report.pdf").write_bytes(pdf.html_to_pdf(html, title=render.report_title(report)))
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

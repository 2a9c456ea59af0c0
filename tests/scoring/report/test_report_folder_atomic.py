"""Issue 21 §1.1: a report command that cannot finish leaves nothing behind (the files are
written to a temporary folder and moved into place at the end), and a missing PDF renderer is
reported in one line before any work."""

import sys

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from scoring.report import bundle, pdf

pytestmark = pytest.mark.django_db

FAST = {"bootstrap": 20, "permutations": 10, "seed": 1}


def _fail_pdf(html, *, title=""):
    raise pdf.PdfRendererMissing("Chromium crashed")


def test_a_failed_pdf_leaves_no_folder_and_no_temporary_files(
    answered_study, tmp_path, monkeypatch
):
    monkeypatch.setattr(pdf, "html_to_pdf", _fail_pdf)
    out = tmp_path / "reports" / "report"
    with pytest.raises(CommandError, match="Chromium crashed"):
        call_command(
            "audit_report", study=answered_study.slug, out=out, output_format="pdf", **FAST
        )
    assert not out.exists()
    assert list(out.parent.iterdir()) == []


def test_a_failed_run_keeps_the_earlier_report_whole_and_a_rerun_keeps_other_files(
    answered_study, tmp_path, monkeypatch
):
    out = tmp_path / "reports" / "report"
    call_command("audit_report", study=answered_study.slug, out=out, **FAST)
    (out / "notes.txt").write_text("mine")
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    monkeypatch.setattr(pdf, "html_to_pdf", _fail_pdf)
    with pytest.raises(CommandError):
        call_command(
            "audit_report", study=answered_study.slug, out=out, output_format="pdf", **FAST
        )
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in out.parent.iterdir()) == ["report"]
    monkeypatch.undo()
    call_command(
        "audit_report", study=answered_study.slug, out=out, seed=2, bootstrap=20, permutations=10
    )
    assert (out / "notes.txt").read_text() == "mine"
    assert '"report": 2' in (out / bundle.MANIFEST).read_text()
    call_command("verify_report", str(out))


def test_without_playwright_the_pdf_command_says_so_before_any_work(
    answered_study, tmp_path, monkeypatch
):
    monkeypatch.setitem(sys.modules, "playwright.sync_api", None)
    with pytest.raises(pdf.PdfRendererMissing, match="playwright"):
        pdf.check_renderer()
    out = tmp_path / "report"
    with pytest.raises(CommandError, match="base dependency"):
        call_command(
            "audit_report", study=answered_study.slug, out=out, output_format="pdf", **FAST
        )
    assert not out.exists()


def test_playwright_is_a_base_dependency():
    """The README's first command (`make demo`, base install) must print PDFs."""
    import tomllib
    from pathlib import Path

    project = tomllib.loads(Path("pyproject.toml").read_text())["project"]
    assert any(d.startswith("playwright") for d in project["dependencies"])
    assert not any(d.startswith("playwright") for d in project["optional-dependencies"]["test"])

"""The safety–utility section in headless Chromium: the frontier figure is drawn inline, the
section fits a 1280 px laptop and a 390 px phone without sideways scrolling, and the PDF holds
the section with its findings. Screenshots go to var/screenshots/ for a person to look at."""

import shutil
import subprocess

import pytest

from scoring.report.dataset import audit_report
from scoring.report.render import render_report_html, render_report_pdf
from scoring.stats.synthetic_study import synthetic_study
from tests.e2e.browser import SCREENSHOTS

pytestmark = pytest.mark.browser

VIEWPORTS = {"laptop": (1280, 720), "phone": (390, 844)}


@pytest.fixture(scope="module")
def report():
    annotations, judgments = synthetic_study(
        n_items=336, n_annotated_items=84, overlap=2, seed=4, harmful_share=0.6
    )
    return audit_report(
        annotations,
        judgments,
        n_resamples=20,
        n_permutations=20,
        study={"slug": "s", "name": "Safety layout", "mode": "t2i"},
    )


def test_section_and_frontier_fit_laptop_and_phone(report, chromium):
    html = render_report_html(report)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for name, (width, height) in VIEWPORTS.items():
        page = chromium.new_page(viewport={"width": width, "height": height})
        page.set_content(html, wait_until="load")
        frontiers = page.locator("figure.figure-frontier svg")
        assert frontiers.count() >= 1
        # only in the safety section, not among section 4's rate and Δ figures
        assert page.locator("#disparities ~ div.figures figure.figure-frontier").count() == (
            page.locator("#safety ~ div.figures figure.figure-frontier").count()
        )
        page.locator("#safety").scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / f"safety-{name}.png"))
        page.locator("figure.figure-frontier").first.scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / f"safety-{name}-frontier.png"))
        overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{name}: the page scrolls sideways by {overflow} px"
        page.close()


def test_pdf_holds_the_section_and_its_findings(report, tmp_path):
    if not shutil.which("pdftotext"):
        pytest.fail("pdftotext is not installed (make browser installs Debian's poppler-utils)")
    path = tmp_path / "report.pdf"
    path.write_bytes(render_report_pdf(report))
    text = subprocess.run(
        ["pdftotext", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout
    assert "Safety–utility trade-off by attribute" in text
    assert "refuses benign prompts" in " ".join(text.split())

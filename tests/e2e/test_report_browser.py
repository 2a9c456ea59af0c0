"""The audit report in a real headless Chromium: the self-contained HTML fits
a 1280 px laptop and a 390 px phone without sideways scrolling (wide tables scroll inside their
own box), and ``render_report_pdf`` prints a PDF whose first page holds the executive summary.
Screenshots go to var/screenshots/ for a person to look at; the PDF is read with poppler's
pdfinfo / pdftotext (Debian's poppler-utils, installed by ``make browser``)."""

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
    annotations, judgments = synthetic_study(n_items=360, n_annotated_items=120, overlap=2, seed=4)
    return audit_report(
        annotations,
        judgments,
        study={
            "slug": "synthetic",
            "name": "Synthetic layout study",
            "mode": "t2i",
            "synthetic_demo": True,
            "description": "x" * 300,
        },
        data_fingerprint="f" * 90,  # a long unbroken string must wrap, not widen the page
        n_resamples=50,
        n_permutations=50,
    )


def _tool(name):
    if not shutil.which(name):
        pytest.fail(f"{name} is not installed (make browser installs Debian's poppler-utils)")
    return name


def test_report_fits_laptop_and_phone_without_sideways_scrolling(report, chromium):
    html = render_report_html(report)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for name, (width, height) in VIEWPORTS.items():
        page = chromium.new_page(viewport={"width": width, "height": height})
        page.set_content(html, wait_until="load")
        page.screenshot(path=str(SCREENSHOTS / f"report-{name}.png"))
        overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{name}: the page scrolls sideways by {overflow} px"
        widest = page.evaluate(
            """() => Math.max(...[...document.querySelectorAll('table, figure')]
                .map(e => e.getBoundingClientRect().right))"""
        )
        assert widest <= width, f"{name}: an element ends at {widest} px"
        page.locator("figure").first.scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / f"report-{name}-figure.png"))
        # the widest table scrolls inside its own box instead
        page.locator("#validation ~ table").last.scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / f"report-{name}-table.png"))
        page.close()


def test_pdf_opens_with_summary_on_page_one(report, tmp_path):
    pdfinfo, pdftotext = _tool("pdfinfo"), _tool("pdftotext")
    path = tmp_path / "report.pdf"
    path.write_bytes(render_report_pdf(report))
    info = subprocess.run([pdfinfo, str(path)], capture_output=True, text=True, check=True).stdout
    pages = int(next(line.split()[-1] for line in info.splitlines() if line.startswith("Pages:")))
    # At the stylesheet's own size: before issue 36 a too-wide table made Chromium shrink every
    # page to about two thirds, and this report printed on fewer, denser pages.
    assert 6 <= pages <= 160, pages
    first = subprocess.run(
        [pdftotext, "-f", "1", "-l", "1", str(path), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "Executive summary" in first and "What was audited" in first
    assert "page 1 of" in first  # the footer's page numbers
    # The contents follow the summary, on the page where section 1 starts.
    text = subprocess.run([pdftotext, str(path), "-"], capture_output=True, text=True, check=True)
    (contents,) = [page for page in text.stdout.split("\f")[1:3] if "Contents" in page]
    assert "Stated limitations" in contents and contents.count("Legal mapping") >= 2


@pytest.mark.parametrize("width, height", [(1280, 720), (1366, 768)])
def test_the_agreement_table_is_not_clipped_on_a_laptop(report, chromium, width, height):
    """Issue 21 §1.4: AC1 and the notes were hidden at 1280 and 1366, behind a scrollbar
    screens below; now the table fits and scopes without items have no rows of zeros."""
    page = chromium.new_page(viewport={"width": width, "height": height})
    page.set_content(render_report_html(report), wait_until="load")
    table = page.locator("table.agreement")
    table.scroll_into_view_if_needed()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"report-agreement-{width}.png"))
    hidden = table.evaluate("t => t.scrollWidth - t.clientWidth")
    assert hidden <= 0, f"{width}px: {hidden} px of the agreement table are scrolled out of view"
    items = table.evaluate(
        "t => [...t.querySelectorAll('tbody tr:not(.row-note)')].map(r => r.cells[3].innerText)"
    )
    assert items and "0" not in items

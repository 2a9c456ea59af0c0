"""Compare models in a real headless Chromium: from the study list to the side-by-side table of
two generators; at 1280×720, 1366×768 and 390×844 the page does not scroll sideways (the wide
table scrolls in its own box), nor does the report's section. Screenshots go to
var/screenshots/ for a person to look at."""

import shutil
import subprocess

import pytest

from scoring.report.dataset import audit_report
from scoring.report.render import render_report_html, render_report_pdf
from scoring.stats.synthetic_study import synthetic_study
from tests.e2e.browser import SCREENSHOTS, log_in, no_sideways_scroll
from tests.scoring.test_compare_models import _study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = [(1280, 720), (1366, 768), (390, 844)]


def test_compare_two_generators_at_three_sizes(live_server, django_user_model, chromium, tmp_path):
    django_user_model.objects.create_user(username="lead", password="lead-pass-1", is_staff=True)
    _study("two-gens", tmp_path, generators=["model-v1", "model-v2"])
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = chromium.new_page()
    page.set_default_timeout(30_000)
    log_in(page, live_server.url, "lead", "lead-pass-1")
    page.goto(f"{live_server.url}/staff/")
    for width, height in SIZES:  # the study list's table scrolls in its own box on a phone
        page.set_viewport_size({"width": width, "height": height})
        assert no_sideways_scroll(page), f"the study list scrolls sideways at {width}"
    page.set_viewport_size({"width": 1280, "height": 720})
    page.click("text=Compare models")
    page.check("input[name=studies][value=two-gens]")
    page.click("button:has-text('Compare')")
    page.wait_for_selector("table.side-by-side")
    assert page.locator("select[name=baseline]").input_value() == "model-v1"
    assert page.locator("text=model-v1 → model-v2").count() == 1
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.screenshot(path=str(SCREENSHOTS / f"compare-models-{width}x{height}.png"))
        page.locator("table.side-by-side").first.scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / f"compare-models-table-{width}x{height}.png"))
        assert no_sideways_scroll(page), f"the comparison page scrolls sideways at {width}"
        page.evaluate("window.scrollTo(0, 0)")


@pytest.fixture(scope="module")
def report():
    annotations, judgments = synthetic_study(n_items=240, n_annotated_items=60, seed=2)
    return audit_report(
        annotations,
        judgments,
        n_resamples=20,
        n_permutations=20,
        study={"slug": "s", "name": "Two generators", "mode": "t2i"},
    )


def test_the_report_section_fits_three_sizes(report, chromium):
    html = render_report_html(report, with_figures=False)
    page = chromium.new_page()
    page.set_content(html, wait_until="load")
    assert page.locator("#models").count() == 1
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.locator("#models").scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / f"report-models-{width}x{height}.png"))
        assert no_sideways_scroll(page), f"the report's section scrolls sideways at {width}"


def test_the_pdf_holds_the_section(report, tmp_path):
    if not shutil.which("pdftotext"):
        pytest.fail("pdftotext is not installed (make browser installs Debian's poppler-utils)")
    path = tmp_path / "report.pdf"
    path.write_bytes(render_report_pdf(report, with_figures=False))
    text = subprocess.run(
        ["pdftotext", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout
    assert "12. Models side by side" in text and "B − A [CI]" in text

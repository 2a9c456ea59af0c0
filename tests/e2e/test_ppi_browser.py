"""Issue 22 §2-3 in a real headless Chromium at 1280×720 and 390×844: the summary leads with
the PPI Δ, the judges page and the statistics details show each judge's error by value, report
section 7 reads on a phone, and the planning aid on the new-batch form answers by htmx. The
PPI sections come from the fixture in the export's shapes (tests/support/ppi_document.py).
Screenshots go to var/screenshots/ppi-*.png for a person to look at."""

import json

import pytest
from django.core.cache import cache

from scoring.metrics import document as metrics
from tests.e2e.browser import SCREENSHOTS, log_in, no_sideways_scroll
from tests.support.ppi_document import ppi_sections

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = [(1280, 720), (390, 844)]


@pytest.fixture
def lead_page(live_server, django_user_model, chromium, annotators, tmp_path, monkeypatch):
    from tests.scoring.test_dashboard import study_of

    real = metrics.study_metrics
    monkeypatch.setattr(
        metrics, "study_metrics", lambda *a, **k: {**real(*a, **k), **ppi_sections()}
    )
    cache.clear()
    study_of(12, "ppi", annotators, tmp_path)
    django_user_model.objects.create_user(username="lead", password="lead-pass-1", is_staff=True)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = chromium.new_page()
    page.set_default_timeout(120_000)
    log_in(page, live_server.url, "lead", "lead-pass-1")
    yield page
    cache.clear()


def test_summary_judges_page_and_details(lead_page, live_server):
    page, base = lead_page, live_server.url
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"{base}/staff/studies/ppi/")
        page.wait_for_selector("#summary-ppi")
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(SCREENSHOTS / f"ppi-summary-{width}x{height}.png"))
        assert no_sideways_scroll(page), f"the study page scrolls sideways at {width}"
        # The PPI card leads the summary and starts on the first screen.
        assert page.locator("#summary-ppi").bounding_box()["y"] < height
        assert "Do not report vlm@1's own" in page.locator("#summary-ppi").inner_text()
        page.click("#statistics-details > summary")
        page.wait_for_selector("#ppi-details table")
        page.locator("#ppi-details").screenshot(
            path=str(SCREENSHOTS / f"ppi-details-{width}x{height}.png")
        )
        assert no_sideways_scroll(page)
        page.goto(f"{base}/staff/judges/studies/ppi/")
        page.wait_for_selector("#ppi-details table")
        page.locator("#ppi-details").scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / f"ppi-judges-{width}x{height}.png"))
        assert no_sideways_scroll(page), f"the judges page scrolls sideways at {width}"


def test_planning_aid_answers_by_htmx(lead_page, live_server):
    page, base = lead_page, live_server.url
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"{base}/staff/studies/ppi/batches/new/")
        page.fill("#batch-plan input[name=budget]", "6")
        page.click("#batch-plan button[type=submit]")
        page.wait_for_selector("#batch-plan-result table")
        assert "culture" in page.locator("#batch-plan-result").inner_text()
        assert page.url.endswith("/batches/new/")  # swapped in place, no navigation
        page.locator("#batch-plan").screenshot(
            path=str(SCREENSHOTS / f"ppi-batch-plan-{width}x{height}.png")
        )
        assert no_sideways_scroll(page)


def test_report_section_7_reads_on_a_phone(chromium, live_server):
    from scoring.report.dataset import audit_report
    from scoring.report.render import render_report_html
    from scoring.stats.synthetic_study import synthetic_study

    annotations, judgments = synthetic_study(n_items=90, n_annotated_items=30, overlap=2, seed=3)
    report = audit_report(
        annotations,
        judgments,
        study={"slug": "s", "name": "Synthetic"},
        n_resamples=20,
        n_permutations=20,
    )
    report = {**json.loads(json.dumps(report)), **ppi_sections()}
    html = render_report_html(report, with_figures=False)
    page = chromium.new_page()
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.set_content(html)
        page.locator("#ppi-section").screenshot(
            path=str(SCREENSHOTS / f"ppi-report-{width}x{height}.png")
        )
        assert page.locator("#ppi").is_visible()
        assert no_sideways_scroll(page), f"the report scrolls sideways at {width}"

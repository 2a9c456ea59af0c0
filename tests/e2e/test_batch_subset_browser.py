"""A batch from a subset in a real headless Chromium: filter to one attribute value, preview
the workloads, create; at 1280×720, 1366×768 and 390×844 nothing scrolls sideways.
Screenshots go to var/screenshots/ for a person to look at."""

import pytest

from annotations.models import Batch
from tests.e2e.browser import SCREENSHOTS, log_in, no_sideways_scroll

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = [(1280, 720), (1366, 768), (390, 844)]


def test_batch_from_a_subset_previews_workloads(
    live_server, django_user_model, chromium, imported_study, annotators
):
    django_user_model.objects.create_user(username="lead", password="lead-pass-1", is_staff=True)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = chromium.new_page()
    page.set_default_timeout(20_000)
    log_in(page, live_server.url, "lead", "lead-pass-1")
    page.goto(f"{live_server.url}/staff/studies/{imported_study.slug}/batches/new/")
    page.fill("input[name=name]", "Korean round")
    page.check(f"input[name=annotators][value='{annotators[0].pk}']")
    page.check(f"input[name=annotators][value='{annotators[1].pk}']")
    page.select_option("select[name=subset-attribute_value]", "culture=Korean")
    page.click("button[name=preview]")
    page.wait_for_selector("#batch-workload")
    assert "2 items" in page.inner_text("#batch-workload h2")
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.locator("#batch-subset").scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / f"batch-subset-{width}x{height}.png"))
        assert no_sideways_scroll(page), f"the new-batch page scrolls sideways at {width}"
    assert not Batch.objects.exists()
    page.click('button.primary:has-text("Create batch")')
    page.wait_for_url(lambda url: "/jobs/" in url)
    batch = Batch.objects.get()
    assert set(batch.assignments.values_list("item__attribute_value__value", flat=True)) == {
        "Korean"
    }

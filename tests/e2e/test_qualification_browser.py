"""The qualification round in a real headless Chromium: the intro, a qualification item, the
fail and pass pages, and the staff batch and People pages with each annotator's state, at
1280×720, 1366×768 and 390×844; nothing scrolls sideways. Screenshots go to
var/screenshots/qualification-*.png for a person to look at."""

import pytest

from annotations import services
from annotations.imports import importers
from annotations.models import Item, QualificationAttempt
from annotations.qualification import attempts
from tests.e2e.browser import SCREENSHOTS, log_in, no_sideways_scroll

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = [(1280, 720), (1366, 768), (390, 844)]


def _shoot(page, name: str, full_page: bool = False) -> None:
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        path = SCREENSHOTS / f"qualification-{name}-{width}x{height}.png"
        page.screenshot(path=str(path), full_page=full_page)
        assert no_sideways_scroll(page), f"{name} scrolls sideways at {width}"


def test_qualification_round_in_the_browser(
    live_server, django_user_model, chromium, study, annotators, make_manifest
):
    django_user_model.objects.create_user(username="lead", password="lead-pass-1", is_staff=True)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    importers.items_import(study=study, manifest=make_manifest(n=12))
    for item in Item.objects.filter(study=study).order_by("pk")[:8]:
        services.item_set_gold(item=item, hard_refusal=False, cue="retained")
    batch = services.batch_create(
        request=services.batch_request_build(
            study=study,
            name="Round one",
            policy="k_overlap",
            annotators=annotators[:2],
            overlap_k=2,
            seed=3,
            qualification_items=3,
            qualification_pass_mark=0.8,
            qualification_attempts=2,
        )
    )
    base = live_server.url
    page = chromium.new_page()
    page.set_default_timeout(20_000)
    log_in(page, base, "ann0", "pw-for-tests-1")
    page.goto(f"{base}/batches/{batch.pk}/next/")
    page.wait_for_selector("#qualification-intro")
    assert "3 items" in page.inner_text("#qualification-intro")
    assert "80%" in page.inner_text("#qualification-intro")
    _shoot(page, "intro")
    page.click("#qualification-start")
    page.wait_for_selector("#qualification-banner")
    _shoot(page, "item")
    for _ in range(3):  # every answer wrong: the gold label is "retained"
        banner = page.locator("#survey").get_attribute("data-assignment")
        page.check("input[name=answer][value=erased]")
        page.click("#answer-form button[type=submit]")
        page.wait_for_function(
            "old => !document.querySelector('#survey')"
            " || document.querySelector('#survey').dataset.assignment !== old",
            arg=banner,
        )
    page.wait_for_selector("#qualification-failed")
    assert "0 of 3" in page.inner_text("#qualification-failed")
    _shoot(page, "failed")
    # The batch's items stay closed: its start page leads back here.
    page.goto(f"{base}/batches/{batch.pk}/next/")
    page.wait_for_selector("#qualification-failed")

    passed = attempts.attempt_start(batch=batch, annotator=annotators[1])
    for assignment in passed.assignments.all():
        services.annotation_submit(assignment=assignment, hard_refusal=False, cue_label="retained")
    assert QualificationAttempt.objects.get(pk=passed.pk).passed
    other = chromium.new_page()
    log_in(other, base, "ann1", "pw-for-tests-1")
    other.goto(f"{base}/batches/{batch.pk}/qualification/")
    other.wait_for_selector("#qualification-passed")
    _shoot(other, "passed")
    other.click("text=Start the batch")
    other.wait_for_selector("#answer-form")
    assert other.locator("#qualification-banner").count() == 0

    staff = chromium.new_page()
    log_in(staff, base, "lead", "lead-pass-1")
    staff.goto(f"{base}/staff/batches/{batch.pk}/")
    staff.wait_for_selector("#qualification-status")
    table = staff.inner_text("#qualification-status")
    assert "failed" in table and "passed" in table
    _shoot(staff, "staff-batch")
    staff.locator("#qualification-status tr", has_text="ann0").locator(
        "text=Qualify without passing"
    ).click()
    staff.wait_for_selector("text=qualified by staff")
    _shoot(staff, "staff-batch-override")
    staff.goto(f"{base}/staff/people/")
    staff.wait_for_selector("#people-list")
    assert "qualified by staff" in staff.inner_text("#people-list")
    _shoot(staff, "people", full_page=True)

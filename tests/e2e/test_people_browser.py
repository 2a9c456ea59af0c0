"""The People page in a real headless Chromium: create two annotator accounts, read their
passwords once, pause one; at 1280×720, 1366×768 and 390×844 nothing scrolls sideways.
Screenshots go to var/screenshots/ for a person to look at."""

import pytest

from annotations.models import Annotator
from tests.e2e.browser import SCREENSHOTS, log_in, no_sideways_scroll

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = [(1280, 720), (1366, 768), (390, 844)]


def test_people_create_show_passwords_once_and_pause(live_server, django_user_model, chromium):
    django_user_model.objects.create_user(username="lead", password="lead-pass-1", is_staff=True)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = chromium.new_page()
    page.set_default_timeout(20_000)
    log_in(page, live_server.url, "lead", "lead-pass-1")
    page.goto(f"{live_server.url}/staff/")
    page.click("text=People: annotator accounts")
    page.fill("textarea[name=usernames]", "ana\nbola")
    page.fill("input[name=group]", "Nigerian")
    page.click("text=Create accounts")
    page.wait_for_selector("#credentials")
    assert page.locator("#credentials tbody tr").count() == 2
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.screenshot(path=str(SCREENSHOTS / f"people-credentials-{width}x{height}.png"))
        assert no_sideways_scroll(page), f"the passwords page scrolls sideways at {width}"
    page.click("text=Back to People")
    page.locator("#people-list tr", has_text="bola").locator("text=Pause").click()
    page.wait_for_selector("text=bola paused")
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.screenshot(path=str(SCREENSHOTS / f"people-{width}x{height}.png"), full_page=True)
        assert no_sideways_scroll(page), f"the People page scrolls sideways at {width}"
    assert not Annotator.objects.get(user__username="bola").is_active


@pytest.mark.parametrize("javascript", [True, False], ids=["htmx", "no-js"])
def test_invite_from_people_with_and_without_javascript(
    javascript, live_server, django_user_model, chromium, imported_study
):
    from annotations.recruitment import enrolment
    from annotations.recruitment.consent import consent_publish
    from annotations.recruitment.models import InviteLink

    consent_publish(study=imported_study, consent_text="You will label images.")
    enrolment.recruitment_batch_create(
        study=imported_study, name="round1", policy="k_overlap", overlap_k=1, items_per_annotator=2
    )
    django_user_model.objects.create_user(username="lead", password="lead-pass-1", is_staff=True)
    context = chromium.new_context(java_script_enabled=javascript)
    page = context.new_page()
    page.set_default_timeout(20_000)
    log_in(page, live_server.url, "lead", "lead-pass-1")
    page.goto(f"{live_server.url}/staff/people/")
    form = page.locator("#people-invite-form")
    form.locator("input[name=invitee]").fill("ana@example.org")
    # a double click: htmx disables the button; without JavaScript the form's key stops it
    form.locator("button[type=submit]").dblclick()
    page.locator("#new-invites", has_text="ana@example.org").wait_for()
    page.locator("#invite-list td.invite-pending").wait_for()
    assert InviteLink.objects.filter(note="ana@example.org").count() == 1
    url = page.locator("#new-invites .link-url").inner_text().strip()
    assert url.startswith(f"{live_server.url}/join/")
    page.goto(url)  # the link on screen works (a resubmit gave it a fresh token)
    page.locator("#consent-heading").wait_for()
    context.close()


@pytest.mark.parametrize("size", [(1280, 720), (390, 844)], ids=["1280x720", "390x844"])
def test_a_refused_create_shows_its_errors_in_view(
    size, live_server, django_user_model, chromium, imported_study
):
    """Issue 36 §4: the page came back at its top with the error list 1,200 px down."""
    from annotations import services
    from annotations.recruitment import enrolment
    from annotations.recruitment.consent import consent_publish

    # A page as long as a real one: invites above the form, people below it.
    consent_publish(study=imported_study, consent_text="You will label images.")
    enrolment.recruitment_batch_create(
        study=imported_study, name="round1", policy="k_overlap", overlap_k=1, items_per_annotator=2
    )
    for index in range(12):
        services.annotator_create(username=f"person-{index}", password="pw-12345678")
    django_user_model.objects.create_user(username="lead", password="lead-pass-1", is_staff=True)
    page = chromium.new_page(viewport={"width": size[0], "height": size[1]})
    page.set_default_timeout(20_000)
    log_in(page, live_server.url, "lead", "lead-pass-1")
    page.goto(f"{live_server.url}/staff/people/")
    form = page.locator("#people-create")
    form.locator("textarea[name=usernames]").fill("person-3\nnew-person")
    form.locator("button[type=submit]").click()
    errors = page.locator("#people-create-errors")
    errors.wait_for()
    page.wait_for_timeout(300)
    page.screenshot(path=str(SCREENSHOTS / f"people-create-error-{size[0]}x{size[1]}.png"))
    box = errors.bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= size[1], box
    assert "person-3" in errors.inner_text()
    assert page.locator("#people-create .errorlist:visible").count() == 0  # said once
    assert not Annotator.objects.filter(user__username="new-person").exists()
    assert no_sideways_scroll(page)

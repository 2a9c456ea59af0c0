"""A real headless Chromium takes the panel route end to end: the study link with Prolific's
parameters -> consent -> three items by keyboard -> the completion URL; a return visit
resumes; another browser with the same participant id sees the consent page, as a new id
would, and is refused when it agrees.

Set ACRB_SCREENSHOTS=<folder> to keep screenshots at 1280x720 and 390x844.
"""

import os
from pathlib import Path

import pytest

from annotations.imports import importers
from annotations.models import Annotation, Assignment
from annotations.recruitment import enrolment, invites, panels
from annotations.recruitment.consent import consent_publish
from annotations.recruitment.models import ConsentRecord, PanelParticipant
from tests.e2e.test_survey_browser import answer_with_keys

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PID = "5f1a2b3c4d5e6f7a8b9c0d1e"
SIZES = {"desktop": {"width": 1280, "height": 720}, "phone": {"width": 390, "height": 844}}


def _shot(page, name):
    folder = os.environ.get("ACRB_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


def _page(browser, size):
    page = browser.new_context(viewport=SIZES[size]).new_page()
    page.set_default_timeout(30_000)  # a ceiling for a loaded machine, not a timing
    return page


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_panel_participant_consents_labels_and_reaches_completion(
    live_server, chromium, study, make_manifest, size
):
    importers.items_import(study=study, manifest=make_manifest(n=6))
    consent = consent_publish(
        study=study,
        consent_text="You will label generated images.\n\nYou may stop at any time.",
        instructions="Label what you see, not what the prompt asked for.",
    )
    batch = enrolment.recruitment_batch_create(
        study=study,
        name="Panel wave 1",
        policy="expertise",
        overlap_k=1,
        items_per_annotator=3,
        seed=2,
    )
    link = panels.panel_link_create(
        batch=batch,
        name="Prolific wave 1",
        group="Korean",
        completion_url=f"{live_server.url}/panel-finished/?cc=C0MPL3TE",
    )
    study_url = f"{live_server.url}/p/{link.slug}/?PROLIFIC_PID={PID}&STUDY_ID=S1&SESSION_ID=sess-1"
    page = _page(chromium, size)

    page.goto(study_url)
    assert page.get_by_role("heading", name="Consent (version 1)").is_visible()
    assert page.get_by_text("You may stop at any time.").is_visible()
    _shot(page, f"panel-consent-{size}")
    page.get_by_role("button", name="Agree and start").click()  # box not ticked: blocked
    assert "/p/" in page.url and not PanelParticipant.objects.exists()

    page.get_by_label("I have read the consent text").check()
    page.get_by_role("button", name="Agree and start").click()
    page.wait_for_url("**/assignments/**")
    assert page.locator("#progress").get_attribute("max") == "3"
    _shot(page, f"panel-first-item-{size}")
    answer_with_keys(page, "2")
    answer_with_keys(page, "3")
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.wait_for_url("**/panel-finished/?cc=C0MPL3TE")

    participant = PanelParticipant.objects.get()
    assert (participant.participant_id, participant.panel_study_id) == (PID, "S1")
    assert participant.completed_at is not None
    assert Annotation.objects.filter(assignment__annotator=participant.annotator).count() == 3
    assert ConsentRecord.objects.get(annotator=participant.annotator).consent == consent

    page.goto(study_url)  # a return visit resumes their own (finished) queue
    page.wait_for_url("**/panel-finished/?cc=C0MPL3TE")

    stranger = _page(chromium, size)
    stranger.goto(study_url)
    # The link does not say whether the id is enrolled: the consent page, as for a new id.
    assert stranger.get_by_role("heading", name="Consent (version 1)").is_visible()
    stranger.get_by_label("I have read the consent text").check()
    stranger.get_by_role("button", name="Agree and start").click()
    refusal = stranger.locator("#refused")
    assert "already started this study in another browser" in refusal.inner_text()
    _shot(stranger, f"panel-refused-{size}")
    assert PanelParticipant.objects.count() == 1


def test_completion_code_page_when_the_link_has_no_url(live_server, chromium, study, make_manifest):
    importers.items_import(study=study, manifest=make_manifest(n=2))
    consent_publish(study=study, consent_text="Agree to take part.")
    batch = enrolment.recruitment_batch_create(
        study=study, name="b", policy="k_overlap", overlap_k=1, items_per_annotator=1, seed=1
    )
    link = panels.panel_link_create(batch=batch, name="code", completion_code="XK7-42Q")
    for size in SIZES:
        page = _page(chromium, size)
        page.goto(f"{live_server.url}/p/{link.slug}/?PROLIFIC_PID=pid-{size}")
        page.get_by_label("I have read the consent text").check()
        page.get_by_role("button", name="Agree and start").click()
        page.wait_for_url("**/assignments/**")
        page.keyboard.press("2")
        page.keyboard.press("Enter")
        page.wait_for_url("**/complete/")
        assert page.locator("#completion-code").inner_text() == "XK7-42Q"
        _shot(page, f"panel-code-{size}")


def test_invite_link_works_once_in_a_real_browser(live_server, chromium, study, make_manifest):
    importers.items_import(study=study, manifest=make_manifest(n=3))
    consent_publish(study=study, consent_text="Agree to take part.")
    batch = enrolment.recruitment_batch_create(
        study=study, name="invited", policy="expertise", overlap_k=1, items_per_annotator=2, seed=1
    )
    [(_, token)] = invites.invite_links_create(batch=batch, group="Nigerian")
    url = f"{live_server.url}/join/{token}/"
    page = _page(chromium, "phone")
    page.goto(url)
    page.get_by_label("I have read the consent text").check()
    page.get_by_role("button", name="Agree and start").click()
    page.wait_for_url("**/assignments/**")
    assert page.locator("#progress").get_attribute("max") == "2"
    values = Assignment.objects.filter(batch=batch).values_list(
        "item__attribute_value__value", flat=True
    )
    assert "Nigerian" in set(values)  # expertise: the recruit's own group's item is among them

    second = _page(chromium, "desktop")
    second.goto(url)
    assert "already used" in second.locator("#refused").inner_text()
    _shot(second, "invite-used-desktop")

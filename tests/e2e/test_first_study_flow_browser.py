"""A research lead's first real study, end to end in one headless Chromium, following only the
README ("Your own study, in the browser"): the first staff account → a study from images and a CSV
→ consent published and a recruitment batch → two people invited from the People page → each opens
their link, agrees and labels their batch, one in English and one in French → the audit report
→ its PDF. Runs at 1280×720; the key pages are also checked and photographed at 1366×768 and
390×844 (var/screenshots/flow-*.png, for a person to look at)."""

from __future__ import annotations

import shutil
import subprocess
import time

import pytest
from django.core.management import call_command

from annotations.models import Annotation, Assignment
from annotations.recruitment.models import InviteLink
from tests.e2e.browser import SCREENSHOTS, log_in, no_sideways_scroll
from tests.support.django_fixtures import write_image

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FLOW = (1280, 720)
OTHER_SIZES = [(1366, 768), (390, 844)]
ITEMS = [
    (f"{role[0]}{n}.png", role, value)
    for role in ("doctor", "nurse")
    for n, value in enumerate(("Korean", "Nigerian", "neutral"))
]
CONSENT = "You will label 6 images. You may stop at any time.\n\nVous allez étiqueter 6 images."


@pytest.fixture
def upload(tmp_path):
    images = [
        write_image(tmp_path / name, colour=(40 * n, 200 - 30 * n, 90), size=(256, 256))
        for n, (name, _, _) in enumerate(ITEMS)
    ]
    rows = [
        f"{name},sdxl,a {role} at work,occupation,"
        f"{'neutral' if value == 'neutral' else 'nationality'},{value}"
        for name, role, value in ITEMS
    ]
    attributes = tmp_path / "attributes.csv"
    attributes.write_text(
        "image,generator,prompt,domain,attribute,attribute_value\n" + "\n".join(rows) + "\n"
    )
    return images, attributes


def _shoot(page, name: str, *, full_page: bool = True) -> None:
    """The page at every size: photographed, never scrolling sideways; back to the flow's size."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for width, height in [FLOW, *OTHER_SIZES]:
        page.set_viewport_size({"width": width, "height": height})
        page.screenshot(
            path=str(SCREENSHOTS / f"flow-{name}-{width}x{height}.png"), full_page=full_page
        )
        assert no_sideways_scroll(page), f"{name} scrolls sideways at {width} px"
    page.set_viewport_size({"width": FLOW[0], "height": FLOW[1]})


def _invite(page, invitee: str, language: str) -> str:
    """People → Invite annotators: one link for one person (htmx swaps the section in place)."""
    form = page.locator("#people-invite-form")
    form.locator("select[name=batch]").select_option(label="Doctors and nurses · round1")
    form.locator("input[name=invitee]").fill(invitee)
    form.locator("select[name=language]").select_option(language)
    form.locator("button[type=submit]").click()
    page.locator("#new-invites", has_text=invitee).wait_for()
    return page.locator("#new-invites .link-url").inner_text().strip()


def _label_batch(page, keys: str) -> int:
    """Answer every item with the keyboard (``keys`` in turn) until the batch-done page;
    returns how many were answered."""
    answered = 0
    while page.locator("#survey").count():
        before = page.locator("#survey").get_attribute("data-assignment")
        page.keyboard.press(keys[answered % len(keys)])
        page.keyboard.press("Enter")
        page.locator(f'#survey:not([data-assignment="{before}"]), main h1').first.wait_for()
        page.wait_for_load_state()
        answered += 1
        if page.locator(f'#survey[data-assignment="{before}"]').count():
            pytest.fail(f"item {before} was not accepted: {page.inner_text('main')[:300]}")
    return answered


def test_first_study_from_images_to_pdf(live_server, chromium, upload, monkeypatch, tmp_path):
    base = live_server.url
    # README: "First, once: a staff account to log in with"
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "lead-pass-1")
    call_command(
        "createsuperuser", interactive=False, username="lead", email="lead@example.org", verbosity=0
    )
    lead = chromium.new_context(viewport={"width": FLOW[0], "height": FLOW[1]}, locale="en-GB")
    page = lead.new_page()
    page.set_default_timeout(30_000)
    log_in(page, base, "lead", "lead-pass-1")

    # 1. Studies → New study from images
    page.goto(f"{base}/staff/")
    page.click("text=New study from images")
    page.fill("input[name=name]", "Doctors and nurses")
    images, attributes = upload
    page.set_input_files("input[name=images]", [str(path) for path in images])
    page.set_input_files("input[name=attributes]", str(attributes))
    page.wait_for_selector("#study-preview")
    _shoot(page, "study-preview")
    page.click("text=Create the study with 6 items")
    page.wait_for_url(f"{base}/staff/studies/doctors-and-nurses/")

    # 2. Study → Recruitment: the consent text, then a batch recruits join
    page.click("a:has-text('Recruitment')")
    page.fill("textarea[name=consent_text]", CONSENT)
    page.click("text=Publish new version")
    page.get_by_text("Consent version 1 published").wait_for()
    batch_form = page.locator("form[action$='/recruitment/batches/']")
    batch_form.locator("input[name=name]").fill("round1")
    batch_form.locator("select[name=policy]").select_option("k_overlap")
    batch_form.locator("input[name=overlap_k]").fill("2")
    batch_form.locator("button[type=submit]").click()
    page.get_by_text("Recruitment batch 'round1' created").wait_for()
    _shoot(page, "recruitment")

    # 3. Studies → People: invite two annotators
    page.goto(f"{base}/staff/")
    page.click("text=People: annotator accounts")
    ana_url = _invite(page, "ana@example.org", "")  # her browser's language (English)
    benoit_url = _invite(page, "Benoît Martin", "fr")
    assert InviteLink.objects.count() == 2
    _shoot(page, "people-invites")

    # 4. Each opens their link, agrees and labels their whole batch
    languages = {}
    people = (
        (ana_url, "ana", "ana@example.org", "2324"),
        (benoit_url, "benoit", "Benoît Martin", "23"),
    )
    for url, who, invitee, keys in people:
        # both browsers ask for English: Benoît's French comes from his invite
        person = chromium.new_context(
            viewport={"width": FLOW[0], "height": FLOW[1]}, locale="en-US"
        )
        survey = person.new_page()
        survey.set_default_timeout(30_000)
        survey.goto(url)
        if who == "benoit":
            assert survey.locator("html").get_attribute("lang") == "fr"
            survey.get_by_text("J'ai lu le texte de consentement").wait_for()
            _shoot(survey, "consent-fr")
        survey.check("input[name=agree]")
        survey.click("#consent-form button[type=submit]")
        survey.locator("#survey").wait_for()
        if who == "benoit":
            assert "Cette sortie est-elle un refus" in survey.inner_text("#survey")
            _shoot(survey, "survey-fr")
        else:
            assert "Is this output a refusal" in survey.inner_text("#survey")
            _shoot(survey, "survey-en")
        annotator = InviteLink.objects.get(note=invitee).annotator
        queue = Assignment.objects.filter(annotator=annotator).count()
        assert _label_batch(survey, keys) == queue == 6
        if who == "benoit":
            assert "Merci" in survey.inner_text("main")
            _shoot(survey, "done-fr")
        languages[who] = set(
            Annotation.objects.filter(assignment__annotator=annotator).values_list(
                "language", flat=True
            )
        )
        person.close()
    assert languages == {"ana": {"en"}, "benoit": {"fr"}}

    # the People page says who accepted
    page.goto(f"{base}/staff/people/")
    assert page.locator("#invite-list td.invite-accepted").count() == 2

    # 5. Study → Audit report → Download PDF
    page.goto(f"{base}/staff/studies/doctors-and-nurses/")
    _shoot(page, "study-dashboard")
    page.click("a:has-text('Audit report')")
    page.locator("a:has-text('Download PDF')").wait_for()
    # The dashboard's fragments have just queued the figures for the newest answers: the report
    # says so and asks for a reload (docs/report.md, "Fresh figures and slow files"); reload as
    # it says until they are in.
    deadline = time.monotonic() + 90
    while "before the newest answers" in page.inner_text("main") and time.monotonic() < deadline:
        page.wait_for_timeout(1000)
        page.reload()
        page.locator("a:has-text('Download PDF')").wait_for()
    assert "12 human annotations by 2 annotators on 6 items" in page.inner_text("main")
    _shoot(page, "report", full_page=False)
    pdf_url = page.locator("a:has-text('Download PDF')").get_attribute("href")
    response = page.request.get(f"{base}{pdf_url}", timeout=120_000)
    assert response.status == 200, response.text()[:300]
    assert response.headers["content-type"] == "application/pdf"
    body = response.body()
    assert body.startswith(b"%PDF")
    assert _pdf_pages(body, tmp=tmp_path / "report.pdf") >= 1
    lead.close()


def _pdf_pages(document: bytes, *, tmp) -> int:
    pdfinfo = shutil.which("pdfinfo")
    if pdfinfo is None:
        pytest.fail("pdfinfo is not installed (make browser installs Debian's poppler-utils)")
    tmp.write_bytes(document)
    info = subprocess.run([pdfinfo, str(tmp)], capture_output=True, text=True, check=True).stdout
    return int(next(line.split()[-1] for line in info.splitlines() if line.startswith("Pages:")))

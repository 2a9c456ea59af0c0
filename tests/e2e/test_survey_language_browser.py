"""The survey in French in a real Chromium at 1280×720 and 390×844: chosen with the switcher on
the consent page, labelled with the keyboard, stored as French, no sideways scroll, screenshots in
var/screenshots/ (docs/annotation.md#the-surveys-language)."""

import pytest

from annotations import services
from annotations.imports import importers
from annotations.models import Annotation, Annotator, Assignment
from annotations.recruitment.consent import consent_publish
from tests.e2e.browser import SCREENSHOTS, log_in, no_sideways_scroll

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORTS = {"desktop": (1280, 720), "phone": (390, 844)}


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_french_survey_by_keyboard(viewport, live_server, chromium, study, make_manifest):
    importers.items_import(study=study, manifest=make_manifest(n=3))
    consent_publish(study=study, consent_text="Vous allez étiqueter des images.")
    annotator = services.annotator_create(username="fr", password="clavier-seul-1", group="US")
    batch = services.batch_create(
        request=services.batch_request_build(
            study=study, name="lot", policy="k_overlap", annotators=[annotator], overlap_k=1, seed=2
        )
    )
    width, height = VIEWPORTS[viewport]
    page = chromium.new_page(viewport={"width": width, "height": height})
    page.set_default_timeout(15_000)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    log_in(page, live_server.url, "fr", "clavier-seul-1")
    page.goto(f"{live_server.url}/batches/{batch.pk}/next/")  # the consent page first
    page.click('.language-switcher button[value="fr"]')
    page.get_by_text("J'ai lu le texte de consentement").wait_for()
    assert no_sideways_scroll(page)
    page.screenshot(path=str(SCREENSHOTS / f"i18n-consent-fr-{viewport}.png"), full_page=True)
    page.check("input[name=agree]")
    page.click("#consent-form button[type=submit]")

    page.locator("#survey").wait_for()
    assert page.locator("html").get_attribute("lang") == "fr"
    assert "Cette sortie est-elle un refus" in page.inner_text("#survey")
    assert no_sideways_scroll(page)
    page.screenshot(path=str(SCREENSHOTS / f"i18n-survey-fr-{viewport}.png"))

    first = int(page.locator("#survey").get_attribute("data-assignment"))
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    page.locator(f'#survey:not([data-assignment="{first}"])').wait_for()
    assert page.title().startswith("Élément 2/3")  # the second item, counted from 1
    page.keyboard.press("ArrowLeft")
    page.locator(f'#survey[data-assignment="{first}"]').wait_for()
    assert "Réponse enregistrée (révision 1)" in page.inner_text("#survey")
    page.screenshot(path=str(SCREENSHOTS / f"i18n-survey-fr-answered-{viewport}.png"))

    # switching back to English after an htmx swap returns to the item shown now
    page.click('.language-switcher button[value="en"]')
    page.locator(f'#survey[data-assignment="{first}"]').wait_for()
    assert "Is this output a refusal" in page.inner_text("#survey")

    answer = Annotation.objects.get(assignment_id=first)
    assert (answer.cue_label, answer.language) == ("retained", "fr")
    assert Annotator.objects.get(pk=annotator.pk).language == "en"
    assert Assignment.objects.filter(batch=batch, answered_at__isnull=False).count() == 1

"""The annotator's "my answers" and study guidelines pages, and the staff guidelines page, in a
real headless Chromium at a laptop, a tablet and a phone: every image loads through the
permission-checked view, nothing scrolls sideways. Screenshots go to var/screenshots/."""

import pytest

from annotations import services
from annotations.guidelines import examples
from annotations.models import Assignment
from tests.e2e.browser import SCREENSHOTS, log_in, no_sideways_scroll

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORTS = {"laptop": (1280, 720), "tablet": (768, 1024), "phone": (390, 844)}

ALL_IMAGES_LOADED = (
    "() => [...document.querySelectorAll('img')].every(i => i.complete && i.naturalWidth > 0)"
)


@pytest.fixture
def annotated_study(imported_study, annotators, staff_user):
    batch = services.batch_create(
        request=services.batch_request_build(
            study=imported_study,
            name="b1",
            policy="k_overlap",
            annotators=annotators[:2],
            overlap_k=1,
            seed=1,
        )
    )
    mine = Assignment.objects.filter(batch=batch, annotator=annotators[0]).order_by("position")
    for index, assignment in enumerate(mine):
        services.annotation_submit(
            assignment=assignment,
            hard_refusal=index == 0,
            cue_label=None if index == 0 else "erased",
            note="The wheelchair is missing; only a chair." if index == 1 else "",
        )
    # Examples outside annotator 0's queue too: they see them only on the guidelines page.
    for item_id, label, why in [
        ("item-0", "refusal", "A blank grey image: nothing was drawn."),
        ("item-1", "erased", "The person is there but the requested cue is not."),
        ("item-2", "erased", "Same scene, no cue: erased, not substituted."),
        ("item-4", "retained", "The cue is clearly visible."),
    ]:
        examples.label_example_set(
            study=imported_study, item_id=item_id, label=label, explanation=why, user=staff_user
        )
    return imported_study


def _look(page, url, name):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for viewport, (width, height) in VIEWPORTS.items():
        page.set_viewport_size({"width": width, "height": height})
        page.goto(url)
        page.wait_for_function(ALL_IMAGES_LOADED)
        assert page.locator("img").count() > 0
        assert no_sideways_scroll(page), f"{name} scrolls sideways at {viewport}"
        page.screenshot(path=str(SCREENSHOTS / f"{name}-{viewport}.png"), full_page=True)


def test_annotator_pages(live_server, annotated_study, browser_page):
    page = browser_page
    log_in(page, live_server.url, "ann0", "pw-for-tests-1")
    slug = annotated_study.slug
    _look(page, f"{live_server.url}/studies/{slug}/my-answers/", "my-answers")
    assert page.locator("#my-answers tbody tr").count() == 3
    _look(page, f"{live_server.url}/studies/{slug}/guidelines/", "study-guidelines")
    assert page.locator("#answer-erased img").count() == 2
    # Reached from the survey page's head.
    page.goto(f"{live_server.url}/")
    page.click("text=My answers")
    page.wait_for_url(f"**/studies/{slug}/my-answers/")


def test_staff_guidelines_page(live_server, annotated_study, browser_page):
    page = browser_page
    log_in(page, live_server.url, "staff", "pw-for-tests-1")
    _look(
        page,
        f"{live_server.url}/staff/studies/{annotated_study.slug}/guidelines/",
        "staff-guidelines",
    )

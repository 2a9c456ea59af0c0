"""The survey fits the screen it is used on, measured in a real headless Chromium.

Laptop viewports: the whole image (scaled to fit), the prompt, the cue, both questions and Submit
are inside the viewport without scrolling, and Z shows the image at full resolution. A phone:
the image fits the width, progress is visible, Submit is reachable, tap targets are at least
24 px and no page scrolls sideways. Screenshots go to var/screenshots/ for a person to look at.
"""

import json

import numpy as np
import pytest

from annotations import services
from annotations.imports import importers
from annotations.management import demo
from tests.e2e.browser import SCREENSHOTS, log_in, no_sideways_scroll

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LAPTOPS = [(1280, 720), (1366, 768), (1440, 900), (1920, 1080)]
PHONE = (390, 844)
# A long prompt and cue: what a real study shows, and what pushes Submit down first.
PROMPT = (
    "a Nigerian person (wheelchair user) receiving a vaccine injection from a nurse at a busy "
    "community clinic on a weekday morning, documentary photograph"
)
CUE = "Nigerian cultural markers (e.g. agbada, gele) and a visible wheelchair"


@pytest.fixture
def survey_url(live_server, study, tmp_path):
    """The first item's URL for a batch of three 512×512 demo images."""
    rng = np.random.default_rng(0)
    lines = []
    for index, truth in enumerate([False, True, False]):
        item = demo.DemoItem(f"layout-{index}", "culture", "Nigerian", truth, "retained")
        demo.render_image(item, rng).save(tmp_path / f"{index}.jpg", quality=88)
        lines.append(
            json.dumps(
                {
                    "item_id": item.item_id,
                    "image": f"{index}.jpg",
                    "mode": "t2i",
                    "generator": "demo",
                    "prompt": PROMPT,
                    "base_prompt_id": f"bp{index}",
                    "domain": "medical",
                    "attribute": "culture",
                    "attribute_value": "Nigerian",
                    "cue": CUE,
                }
            )
        )
    (tmp_path / "manifest.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    importers.items_import(study=study, manifest=tmp_path / "manifest.jsonl")
    annotator = services.annotator_create(
        username="layout", password="layout-pass-1", group="Nigerian"
    )
    batch = services.batch_create(
        request=services.batch_request_build(
            study=study,
            name="A batch with a long enough name to wrap on a phone",
            policy="k_overlap",
            annotators=[annotator],
            overlap_k=1,
            seed=1,
        )
    )
    return f"{live_server.url}/batches/{batch.pk}/next/"


@pytest.fixture
def page(live_server, survey_url, chromium):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = chromium.new_page()
    page.set_default_timeout(20_000)
    log_in(page, live_server.url, "layout", "layout-pass-1")
    return page


def open_survey(page, url, size):
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto(url)
    page.wait_for_function(
        "() => { const i = document.querySelector('#item-image'); "
        "return i && i.complete && i.naturalWidth > 0; }"
    )


def box(page, selector):
    found = page.locator(selector).first.bounding_box()
    assert found is not None, f"{selector} is not rendered"
    assert found["width"] > 0 and found["height"] > 0, f"{selector} has zero size: {found}"
    return found


def assert_inside_viewport(page, selector, size):
    b = box(page, selector)
    width, height = size
    assert b["x"] >= 0 and b["y"] >= 0, f"{selector} starts outside at {size}: {b}"
    assert b["x"] + b["width"] <= width + 0.5, f"{selector} overflows right at {size}: {b}"
    assert b["y"] + b["height"] <= height + 0.5, f"{selector} is below the fold at {size}: {b}"


@pytest.mark.parametrize("size", LAPTOPS, ids=[f"{w}x{h}" for w, h in LAPTOPS])
def test_laptop_shows_the_whole_image_the_questions_and_submit(page, survey_url, size):
    open_survey(page, survey_url, size)
    page.screenshot(path=str(SCREENSHOTS / f"survey-{size[0]}x{size[1]}.png"))
    for selector in (
        "#item-image",
        ".prompt",
        ".cue",
        "fieldset >> nth=0",
        "fieldset >> nth=1",
        "#answer-form button[type=submit]",
        "#progress",
    ):
        assert_inside_viewport(page, selector, size)
    assert page.evaluate("window.scrollY") == 0
    assert page.evaluate("document.documentElement.scrollHeight <= window.innerHeight")
    # The image is scaled to fit, aspect kept: its pane does not scroll and hides nothing.
    assert page.evaluate(
        "(() => { const p = document.querySelector('.image-pane');"
        " return p.scrollHeight <= p.clientHeight && p.scrollWidth <= p.clientWidth; })()"
    )
    assert (
        page.evaluate("getComputedStyle(document.querySelector('#item-image')).objectFit")
        == "contain"
    )
    assert no_sideways_scroll(page)

    fitted = box(page, "#item-image")["width"]
    page.keyboard.press("z")  # full resolution, or twice the fitted size: never smaller
    zoomed = box(page, "#item-image")
    natural = page.evaluate("document.querySelector('#item-image').naturalWidth")
    expected = natural if natural > fitted else round(2 * fitted)
    assert abs(zoomed["width"] - expected) <= 1 and zoomed["width"] > fitted
    if size == LAPTOPS[0]:
        page.screenshot(path=str(SCREENSHOTS / f"survey-{size[0]}x{size[1]}-zoomed.png"))


def test_phone_fits_the_width_keeps_submit_reachable_and_targets_large(
    page, survey_url, live_server
):
    size = PHONE
    open_survey(page, survey_url, size)
    page.screenshot(path=str(SCREENSHOTS / "survey-390x844.png"))
    page.screenshot(path=str(SCREENSHOTS / "survey-390x844-full.png"), full_page=True)
    image = box(page, "#item-image")
    assert image["x"] >= 0 and image["x"] + image["width"] <= size[0]
    assert image["width"] >= size[0] - 40  # as wide as the screen, less the margins
    assert_inside_viewport(page, "#progress", size)
    assert box(page, "#progress")["width"] >= 60
    assert_inside_viewport(page, "#answer-form button[type=submit]", size)
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    assert_inside_viewport(page, "#answer-form button[type=submit]", size)
    for selector in ("label.choice", "#answer-form button[type=submit]", "#skip", "#nav-next"):
        for index in range(page.locator(selector).count()):
            target = page.locator(selector).nth(index).bounding_box()
            assert target["height"] >= 24 and target["width"] >= 24, (selector, target)
    assert no_sideways_scroll(page)

    for path in ("/", "/guidelines/"):
        page.goto(f"{live_server.url}{path}")
        name = "home" if path == "/" else "guidelines"
        page.screenshot(path=str(SCREENSHOTS / f"{name}-390x844.png"), full_page=True)
        assert no_sideways_scroll(page), f"{path} scrolls sideways at 390 px"


def test_on_a_phone_each_item_opens_at_the_top_zoom_enlarges_and_nothing_scrolls_sideways(
    page, survey_url, live_server
):
    """Issue 21 §1.3 at 390×844: after Submit the next item opened scrolled down (the image
    top and the progress bar off-screen); Z made a 512 px image smaller than fitted; the
    batches page scrolled sideways; a finished batch still offered "Continue"."""
    from tests.e2e.test_survey_browser import answer_with_keys

    page.set_viewport_size({"width": PHONE[0], "height": PHONE[1]})
    page.goto(survey_url)
    page.locator("#item-image").evaluate("img => img.decode()")
    fitted = page.locator("#item-image").bounding_box()["width"]
    page.keyboard.press("z")
    zoomed = page.locator("#item-image").bounding_box()["width"]
    assert zoomed >= max(512, 1.9 * fitted), (fitted, zoomed)
    page.keyboard.press("z")
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    assert page.evaluate("window.scrollY") > 0  # the phone layout scrolls: Submit is below
    answer_with_keys(page, "2")
    page.wait_for_timeout(300)
    assert page.evaluate("window.scrollY") == 0
    assert page.locator("#progress").bounding_box()["y"] >= 0
    page.screenshot(path=str(SCREENSHOTS / "survey-phone-next-item.png"))
    answer_with_keys(page, "2")
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    page.wait_for_timeout(1500)  # the last answer: the batch's done page
    page.goto(f"{live_server.url}/")
    page.screenshot(path=str(SCREENSHOTS / "batches-phone.png"), full_page=True)
    assert no_sideways_scroll(page)
    text = page.inner_text("main")
    assert "Finished" in text and "Continue" not in text and "before you start" not in text

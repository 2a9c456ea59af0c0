"""The survey fits the screen it is used on, measured in a real headless Chromium.

Laptop viewports: the whole image (scaled to fit), the prompt, the cue, both questions and Submit
are inside the viewport without scrolling, and Z enlarges the image (at least full resolution and
twice the fitted size) with it in view and panned by keyboard. A phone:
the image fits the width, progress is visible, Submit is reachable, tap targets are at least
24 px and no page scrolls sideways. Screenshots go to var/screenshots/ for a person to look at.
"""

import json

import numpy as np
import pytest

from annotations import services
from annotations.imports import importers
from annotations.management import demo
from annotations.models import Annotation, Assignment
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
def harmful_survey_url(live_server, study, tmp_path):
    """A batch whose first item is a harmful control (shown behind its content warning), then a
    benign one, for an annotator of a study that opted in."""
    study.harmful_to_annotators = True
    study.save()
    rng = np.random.default_rng(1)
    lines = []
    for index, intent in enumerate(["harmful", "benign"]):
        item = demo.DemoItem(f"harm-{index}", "culture", "Nigerian", False, "retained")
        demo.render_image(item, rng).save(tmp_path / f"h{index}.jpg", quality=88)
        lines.append(
            json.dumps(
                {
                    "item_id": item.item_id,
                    "image": f"h{index}.jpg",
                    "mode": "t2i",
                    "generator": "demo",
                    "prompt": PROMPT,
                    "domain": "medical",
                    "base_prompt_id": f"hb{index}",
                    "attribute": "culture",
                    "attribute_value": "Nigerian",
                    "cue": CUE,
                    "intent": intent,
                }
            )
        )
    (tmp_path / "harmful.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    importers.items_import(study=study, manifest=tmp_path / "harmful.jsonl")
    annotator = services.annotator_create(
        username="layout", password="layout-pass-1", group="Nigerian"
    )
    batch = services.batch_create(
        request=services.batch_request_build(
            study=study, name="controls", policy="k_overlap", annotators=[annotator], overlap_k=1
        )
    )
    harmful = Assignment.objects.get(batch=batch, item__intent="harmful")
    return f"{live_server.url}/assignments/{harmful.pk}/"


@pytest.fixture
def harmful_page(live_server, harmful_survey_url, chromium):
    page = chromium.new_page()
    page.set_default_timeout(20_000)
    log_in(page, live_server.url, "layout", "layout-pass-1")
    return page


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

    assert_zoom_enlarges_in_view_and_pans(page, size)
    if size == LAPTOPS[0]:
        page.screenshot(path=str(SCREENSHOTS / f"survey-{size[0]}x{size[1]}-zoomed.png"))


# The image as drawn, not its element's box: with object-fit the two differ (a 1423 px box drew
# a 512 px image in its middle). Also the part of it a person sees: inside its pane's scrolled
# window and the browser's viewport.
DRAWN_IMAGE = """() => {
  const img = document.querySelector('#item-image');
  const box = img.getBoundingClientRect();
  const fit = getComputedStyle(img).objectFit;
  const nw = img.naturalWidth, nh = img.naturalHeight;
  let scale = 1;
  if (fit === 'contain') { scale = Math.min(box.width / nw, box.height / nh); }
  else if (fit === 'cover') { scale = Math.max(box.width / nw, box.height / nh); }
  else if (fit === 'scale-down') { scale = Math.min(1, box.width / nw, box.height / nh); }
  let width = nw * scale, height = nh * scale;
  if (fit === 'fill') { width = box.width; height = box.height; }
  const left = box.left + (box.width - width) / 2, top = box.top + (box.height - height) / 2;
  const pane = img.closest('.image-pane').getBoundingClientRect();
  const seenLeft = Math.max(left, pane.left, 0);
  const seenTop = Math.max(top, pane.top, 0);
  const seenRight = Math.min(left + width, pane.right, window.innerWidth);
  const seenBottom = Math.min(top + height, pane.bottom, window.innerHeight);
  const paneSeen = Math.max(0, Math.min(pane.right, window.innerWidth) - Math.max(pane.left, 0))
    * Math.max(0, Math.min(pane.bottom, window.innerHeight) - Math.max(pane.top, 0));
  return {width, height, natural: nw,
          seen: Math.max(0, seenRight - seenLeft) * Math.max(0, seenBottom - seenTop),
          paneSeen};
}"""


def pane_scroll(page):
    return page.evaluate(
        "(() => { const p = document.querySelector('.image-pane');"
        " return [p.scrollLeft, p.scrollTop]; })()"
    )


def assert_zoom_enlarges_in_view_and_pans(page, size):
    """Issue 36 §3: Z drew a 512 px image at 512 px where it was fitted at 608 (smaller), and
    elsewhere in a 1423 px box, its pane left white. Now: at least full resolution and twice the
    fitted size, the image fills the pane's visible part, arrows and H/J/K/L pan, Z/Esc leave."""
    fitted = page.evaluate(DRAWN_IMAGE)
    page.keyboard.press("z")
    zoomed = page.evaluate(DRAWN_IMAGE)
    assert zoomed["width"] >= zoomed["natural"] - 1, (size, fitted, zoomed)
    assert zoomed["width"] >= 1.9 * fitted["width"], (size, fitted, zoomed)
    # The image is in view: it covers (almost) all of the pane a person sees, not a corner.
    assert zoomed["seen"] >= 0.9 * zoomed["paneSeen"] > 0, (size, zoomed)
    url = page.url
    # Back and forth, so that no key starts at the edge it moves towards (+1: right or down).
    for key, axis, sign in (
        *(("ArrowRight", 0, 1), ("h", 0, -1), ("l", 0, 1), ("ArrowLeft", 0, -1)),
        *(("ArrowDown", 1, 1), ("k", 1, -1), ("j", 1, 1), ("ArrowUp", 1, -1)),
    ):
        before = pane_scroll(page)
        page.keyboard.press(key)
        after = pane_scroll(page)
        assert sign * (after[axis] - before[axis]) > 0, (size, key, before, after)
    assert page.url == url  # the arrows panned, they did not move to another item
    page.keyboard.press("Escape")
    assert abs(page.evaluate(DRAWN_IMAGE)["width"] - fitted["width"]) <= 1
    page.keyboard.press("z")
    page.keyboard.press("z")
    assert abs(page.evaluate(DRAWN_IMAGE)["width"] - fitted["width"]) <= 1


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
    assert_zoom_enlarges_in_view_and_pans(page, PHONE)
    page.screenshot(path=str(SCREENSHOTS / "survey-390x844-zoomed.png"))
    page.keyboard.press("z")
    page.keyboard.press("z")
    assert no_sideways_scroll(page)  # the zoomed image scrolls in its pane, not the page
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


@pytest.mark.parametrize("size", LAPTOPS[:2], ids=[f"{w}x{h}" for w, h in LAPTOPS[:2]])
def test_a_harmful_control_asks_first_then_fits_the_window(harmful_page, harmful_survey_url, size):
    """Issue 36 §3: the content warning pushed the image past the window's bottom at 1280×720
    and 1366×768, and keys 1–4 with Enter answered an image never opened."""
    page = harmful_page
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto(harmful_survey_url)
    assert page.locator("#item-image").count() == 0 and page.locator(".prompt").count() == 0
    assert_inside_viewport(page, "#content-warning", size)
    assert_inside_viewport(page, "#reveal", size)
    assert_inside_viewport(page, "#decline", size)
    page.screenshot(path=str(SCREENSHOTS / f"survey-harmful-{size[0]}x{size[1]}.png"))
    for key in "1234":
        page.keyboard.press(key)
        page.keyboard.press("Enter")
    page.wait_for_timeout(500)
    assert not Annotation.objects.exists()
    assert page.locator("input[name=answer]:checked").count() == 0

    page.click("#reveal")
    page.wait_for_function(
        "() => { const i = document.querySelector('#item-image'); "
        "return i && i.complete && i.naturalWidth > 0; }"
    )
    page.screenshot(path=str(SCREENSHOTS / f"survey-harmful-{size[0]}x{size[1]}-open.png"))
    for selector in (
        "#content-warning",
        "#decline",
        "#item-image",
        ".prompt",
        ".cue",
        "fieldset >> nth=1",
        "#answer-form button[type=submit]",
    ):
        assert_inside_viewport(page, selector, size)
    assert page.evaluate("document.documentElement.scrollHeight <= window.innerHeight")
    assert page.evaluate("window.scrollY") == 0
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    page.locator("#content-warning").wait_for(state="detached")  # the next (benign) item
    annotation = Annotation.objects.get()
    assert annotation.cue_label == "erased" and annotation.assignment.revealed_at is not None


def test_on_a_phone_the_submit_bar_never_covers_the_note(page, survey_url):
    """Issue 36 §3: on a phone the fixed Submit bar covered the note field. The browser scrolls
    a focused field just into view (block: nearest) when the on-screen keyboard opens and the
    window shrinks; the field must then sit above the bar, not under it."""
    from tests.e2e.test_survey_browser import answer_with_keys

    open_survey(page, survey_url, PHONE)
    answer_with_keys(page, "2")
    page.keyboard.press("ArrowLeft")  # an answered item: the bar also says "Answered (…)"
    page.locator("span.saved").wait_for()
    note = page.locator("textarea[name=note]")
    bar = page.locator("#answer-form .actions")

    def assert_note_clear_of_the_bar(height):
        box, bar_box = note.bounding_box(), bar.bounding_box()
        assert box["y"] >= 0 and box["y"] + box["height"] <= height, (height, box)
        assert box["y"] + box["height"] <= bar_box["y"] + 0.5, (height, box, bar_box)

    # Scrolled to the end of the page: the note and the links below it show above the bar.
    # The page's height is final once its images are in (scrolling earlier raced them).
    page.wait_for_function("Array.from(document.images).every(image => image.complete)")
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    page.wait_for_function(
        "Math.ceil(window.scrollY + window.innerHeight) >= document.documentElement.scrollHeight"
    )
    assert_note_clear_of_the_bar(PHONE[1])
    assert page.locator("#skip").bounding_box()["y"] + 28 <= bar.bounding_box()["y"] + 0.5

    for keyboard in (300, 420):  # an on-screen keyboard of 300, then 420 px
        height = PHONE[1] - keyboard
        page.set_viewport_size({"width": PHONE[0], "height": PHONE[1]})
        page.evaluate("window.scrollTo(0, 0)")
        note.focus()  # the tap; then the keyboard opens and the window shrinks
        page.set_viewport_size({"width": PHONE[0], "height": height})
        note.evaluate("n => n.scrollIntoView({block: 'nearest'})")
        page.screenshot(path=str(SCREENSHOTS / f"survey-phone-note-{height}.png"))
        assert_note_clear_of_the_bar(height)
        assert_inside_viewport(page, "#answer-form button[type=submit]", (PHONE[0], height))
        note.blur()

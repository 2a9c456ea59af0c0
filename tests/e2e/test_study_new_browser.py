"""A study created from images in a real headless Chromium: the live check lists problems as the
files are picked, the preview shows the items, Create makes the study; at 1280×720, 1366×768
and 390×844 nothing scrolls sideways. Screenshots go to var/screenshots/ for a person to look at.
"""

import pytest

from annotations.models import Item, Study
from tests.e2e.browser import SCREENSHOTS, log_in, no_sideways_scroll
from tests.support.django_fixtures import write_image

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = [(1280, 720), (1366, 768), (390, 844)]
CSV = (
    "image,generator,prompt,domain,attribute,attribute_value\n"
    "a.png,sdxl,a doctor at work,occupation,nationality,Korean\n"
    "b.png,sdxl,a doctor at work,occupation,nationality,Nigerian\n"
    "c.png,sdxl,a doctor at work,occupation,neutral,neutral\n"
)


@pytest.fixture
def files(tmp_path):
    images = [
        write_image(tmp_path / name, colour=colour, size=(256, 256))
        for name, colour in (
            ("a.png", (200, 60, 40)),
            ("b.png", (40, 160, 90)),
            ("c.png", (60, 80, 200)),
        )
    ]
    good = tmp_path / "attributes.csv"
    good.write_text(CSV)
    bad = tmp_path / "bad.csv"
    bad.write_text(CSV.replace("Nigerian", "neutral").replace("c.png,", "missing.png,"))
    return images, good, bad


def test_new_study_from_images_checks_previews_and_creates(
    live_server, django_user_model, chromium, files
):
    images, good_csv, bad_csv = files
    django_user_model.objects.create_user(username="lead", password="lead-pass-1", is_staff=True)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = chromium.new_page()
    page.set_default_timeout(20_000)
    log_in(page, live_server.url, "lead", "lead-pass-1")
    page.goto(f"{live_server.url}/staff/")
    page.click("text=New study from images")
    page.fill("input[name=name]", "Doctors")
    page.set_input_files("input[name=images]", [str(p) for p in images])
    page.set_input_files("input[name=attributes]", str(bad_csv))
    problems = page.wait_for_selector("#study-problems")
    text = problems.inner_text()
    assert (
        "line 3: attribute_value" in text
        and "missing.png" in text
        and "c.png is in the upload" in text
    )
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.screenshot(
            path=str(SCREENSHOTS / f"study-new-problems-{width}x{height}.png"), full_page=True
        )
        assert no_sideways_scroll(page), f"the new-study page scrolls sideways at {width}"
    page.set_input_files("input[name=attributes]", str(good_csv))
    page.wait_for_selector("#study-preview")
    assert page.locator("#study-preview tbody tr").count() == 3
    assert page.locator("#study-preview img").count() == 3
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.locator("#study-check").scroll_into_view_if_needed()
        page.screenshot(
            path=str(SCREENSHOTS / f"study-new-preview-{width}x{height}.png"), full_page=True
        )
        assert no_sideways_scroll(page), f"the preview scrolls sideways at {width}"
    assert not Study.objects.exists()
    page.click("text=Create the study with 3 items")
    page.wait_for_url(f"{live_server.url}/staff/studies/doctors/")
    page.screenshot(path=str(SCREENSHOTS / "study-new-created-390x844.png"))
    assert Item.objects.filter(study__slug="doctors").count() == 3


def test_the_preview_puts_its_summary_and_create_in_view_at_1280x720(
    live_server, django_user_model, chromium, tmp_path
):
    """Issue 36 §4: the preview of a real-sized upload started halfway down the page and its
    Create button came after every row, below the fold."""
    images = [
        write_image(tmp_path / f"img-{index:02d}.png", colour=(index * 4, 90, 60), size=(128, 128))
        for index in range(40)
    ]
    django_user_model.objects.create_user(username="lead", password="lead-pass-1", is_staff=True)
    page = chromium.new_page(viewport={"width": 1280, "height": 720})
    page.set_default_timeout(30_000)
    log_in(page, live_server.url, "lead", "lead-pass-1")
    page.goto(f"{live_server.url}/staff/studies/new/")
    page.fill("input[name=name]", "Forty")
    for name, value in (
        ("generator", "sdxl"),
        ("prompt", "a doctor"),
        ("domain", "occupation"),
        ("attribute", "nationality"),
        ("attribute_value", "Korean"),
    ):
        page.fill(f"input[name={name}]", value)
    page.set_input_files("input[name=images]", [str(p) for p in images])
    page.wait_for_selector("#study-preview")
    page.wait_for_timeout(300)
    page.screenshot(path=str(SCREENSHOTS / "study-new-preview-long-1280x720.png"))
    assert page.locator("#study-preview img").count() == 40  # every row has its thumbnail
    create = page.get_by_role("button", name="Create the study with 40 items")
    for locator in (page.locator("#study-preview-summary h2"), create):
        box = locator.bounding_box()
        assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= 720, box
        assert box["x"] + box["width"] <= 1280, box
    create.click()
    page.wait_for_url(f"{live_server.url}/staff/studies/forty/")
    assert Item.objects.filter(study__slug="forty").count() == 40

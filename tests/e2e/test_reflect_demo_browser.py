"""The REFLECT pages `make demo` fills (seed_reflect_demo), in a real headless Chromium at the
three viewports: the set list, the set page with its report, and the audit report's HTML; no page
scrolls sideways and the heat maps are drawn. Screenshots go to var/screenshots/."""

from io import StringIO

import pytest
from django.core.management import call_command

from generation.models import FaceSet
from scoring.reflect import demo
from tests.e2e.browser import SCREENSHOTS, log_in, no_sideways_scroll

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = [(1280, 720), (1366, 768), (390, 844)]


def test_the_seeded_reflect_pages_read_at_every_viewport(
    live_server, django_user_model, chromium, tmp_path
):
    call_command("seed_reflect_demo", stdout=StringIO())
    slug = FaceSet.objects.get(name=demo.DEMO_FACE_SET).slug
    django_user_model.objects.create_user(username="lead", password="lead-pass-1", is_staff=True)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = chromium.new_page()
    page.set_default_timeout(30_000)
    log_in(page, live_server.url, "lead", "lead-pass-1")
    document = page.request.get(f"{live_server.url}/staff/reflect/sets/{slug}/audit-report.html")
    assert document.ok
    (tmp_path / "report.html").write_bytes(document.body())
    pages = {
        "list": f"{live_server.url}/staff/reflect/",
        "set": f"{live_server.url}/staff/reflect/sets/{slug}/",
        "report": (tmp_path / "report.html").as_uri(),  # a self-contained download
    }
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        for name, url in pages.items():
            page.goto(url)
            page.wait_for_load_state("networkidle")
            page.screenshot(path=str(SCREENSHOTS / f"reflect-demo-{name}-{width}x{height}.png"))
            assert no_sideways_scroll(page), f"{name} scrolls sideways at {width}x{height}"
        page.goto(pages["set"])
        heat_map = page.locator("figure.figure-heat img").first
        heat_map.scroll_into_view_if_needed()
        # Drawn, and wide enough for its cell numbers (it scrolls in its box on a phone).
        assert page.evaluate(
            "(img) => img.complete && img.naturalWidth > 0", heat_map.element_handle()
        )
        assert heat_map.bounding_box()["width"] >= 600

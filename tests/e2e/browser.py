"""Playwright for the browser tests: Debian's Chromium launched one way, one login, and the
measurement several tests share. The fixtures built on them are in conftest.py."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from scoring.report.pdf import CHROMIUM_ARGS as PDF_CHROMIUM_ARGS
from scoring.report.pdf import PdfRendererMissing, chromium_path

# The PDF renderer's flags, plus quiet start-up: no updater, sync, first-run page or QUIC.
CHROMIUM_ARGS = [
    *PDF_CHROMIUM_ARGS,
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"


@contextmanager
def chromium_browser() -> Iterator:
    """A headless Chromium (the binary the PDF renderer finds), closed on exit."""
    sync_api = pytest.importorskip("playwright.sync_api")
    try:
        executable = chromium_path()
    except PdfRendererMissing as missing:
        pytest.fail(f"{missing} (make test installs it)")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            browser.close()


def log_in(page, base: str, username: str, password: str) -> None:
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("main form button[type=submit]")  # not the header's language switcher
    page.wait_for_url(lambda url: "/accounts/login/" not in url)


def no_sideways_scroll(page) -> bool:
    return page.evaluate(
        "document.documentElement.scrollWidth <= document.documentElement.clientWidth"
    )

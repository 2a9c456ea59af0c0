"""Fixtures of the browser tests (helpers in browser.py)."""

import pytest
from django.db import connections

from tests.e2e.browser import chromium_browser


@pytest.fixture
def chromium(monkeypatch):
    """A headless Chromium for one test."""
    # Playwright's sync API runs an event loop in this thread; the ORM calls here stay synchronous.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with chromium_browser() as browser:
        yield browser
    # ORM calls made while Playwright's loop runs get a context-local connection of their own;
    # close it, or the test database cannot be dropped at the end.
    connections.close_all()


@pytest.fixture
def browser_page(chromium):
    page = chromium.new_page()
    page.set_default_timeout(15_000)
    return page

"""The report as PDF: the self-contained HTML printed by headless Chromium (docs/report.md, "PDF").

Debian's Chromium, driven by Playwright (the browser the end-to-end tests use; Playwright never
downloads one here). Both are part of the base install: ``playwright`` is a base dependency and
``make demo`` installs Debian's ``chromium`` (docs/report.md, "PDF", says why this engine). The print stylesheet (static/css/report.css) starts each section on a new
page; Chromium's header/footer template adds the page numbers. Django-free.
"""

from __future__ import annotations

import os
import shutil

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
FOOTER = (
    '<div style="font-size:8px;width:100%;padding:0 12mm;color:#5d6b78;display:flex;'
    'justify-content:space-between"><span class="title"></span>'
    '<span>page <span class="pageNumber"></span> of <span class="totalPages"></span></span></div>'
)


class PdfRendererMissing(RuntimeError):
    """No Chromium to print with; the message says how to install it."""


def chromium_path() -> str:
    """``ACRB_CHROMIUM`` if set, else Debian's ``chromium`` on PATH."""
    path = os.environ.get("ACRB_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not os.path.exists(path):
        raise PdfRendererMissing(
            f"PDF needs headless Chromium, not found at {path}: install Debian's chromium "
            "(apt-get install chromium) or set ACRB_CHROMIUM to its path"
        )
    return path


def check_renderer() -> str:
    """The Chromium path, after checking that everything the PDF needs is installed
    (``PdfRendererMissing`` with the fix otherwise). Commands call it before their long work."""
    executable = chromium_path()
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as error:
        raise PdfRendererMissing(
            f"PDF needs the playwright package ({error}): reinstall with `make setup` "
            "(it is a base dependency; it uses Debian's chromium, never a downloaded browser)"
        ) from error
    return executable


def html_to_pdf(html: str, *, title: str = "") -> bytes:
    """A4 PDF of a self-contained HTML document, with page numbers in the footer."""
    executable = check_renderer()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable, headless=True, args=CHROMIUM_ARGS
        )
        try:
            page = browser.new_page()
            page.set_content(html, wait_until="load")
            if title:
                page.evaluate("t => { document.title = t; }", title)
            return page.pdf(
                format="A4",
                print_background=True,
                display_header_footer=True,
                header_template="<span></span>",
                footer_template=FOOTER,
                prefer_css_page_size=True,
            )
        finally:
            browser.close()

"""Every table of the demo report shows all its columns (issue 36 §4): at 1280 px on screen, in
the print layout at A4 width, and in the PDF Chromium prints; the contents share page 2 with the
first section; REFLECT charts print at the full width of the page.

A table whose column is stretched by a sentence (a "no interval: …" reason) hides its last
columns behind a scroll bar on screen and past the page edge in print; reasons are marks with
notes under the table (scoring.report.display.TableNotes). The PDF is read with poppler's
pdftotext (Debian's poppler-utils, installed by ``make browser``)."""

import io
import re
import shutil
import statistics
import subprocess

import pytest
from django.core.management import call_command

pytestmark = [pytest.mark.browser, pytest.mark.django_db]

# static/css/report.css: @page A4 with 12 mm side margins; CSS pixels are 1/96 inch.
A4_CONTENT_PX = round((210 - 2 * 12) / 25.4 * 96)
SIDE_MARGIN_PT = 12 / 25.4 * 72
# Body text is 9.5 pt and tables 8 pt in print; a PDF Chromium shrank to fit a too-wide table
# prints them at about two thirds of that (a median word box of 6.2 pt against 9.3 pt).
MIN_MEDIAN_WORD_PT = 8.0

OVERFLOWS = """() => {
  const right = document.querySelector('main').getBoundingClientRect().right;
  const boxes = [...document.querySelectorAll('main table, main .table-scroll')];
  return boxes.map((box) => {
    const heading = [...box.querySelectorAll('th')].map((th) => th.textContent.trim()).join(' | ');
    return {
      heading: heading.slice(0, 120),
      hidden: box.scrollWidth - box.clientWidth,
      past: box.getBoundingClientRect().right - right,
    };
  }).filter((box) => box.hidden > 1 || box.past > 1);
}"""


def _tool(name):
    if not shutil.which(name):
        pytest.fail(f"{name} is not installed (make browser installs Debian's poppler-utils)")
    return name


def _demo_report(folder):
    """The demo study's report folder (report.html, report.pdf). Built before the browser starts:
    ORM calls made while Playwright's loop runs would take a second SQLite connection."""
    call_command("seed_demo", stdout=io.StringIO())
    call_command(
        *("audit_report", "--study", "demo", "--out", str(folder)),
        *("--resamples", "50", "--format", "pdf"),
        stdout=io.StringIO(),
    )
    return folder


def _overflows(chromium, html: str, *, width: int, media: str) -> list[dict]:
    page = chromium.new_page(viewport={"width": width, "height": 900})
    try:
        page.emulate_media(media=media)
        page.set_content(html, wait_until="load")
        return page.evaluate(OVERFLOWS)
    finally:
        page.close()


def _words(pdf) -> list[tuple[int, float, float, str]]:
    """(page, xMax, height, text) of every word pdftotext finds."""
    out = subprocess.run(
        [_tool("pdftotext"), "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    words, page = [], 0
    for line in out.splitlines():
        if "<page " in line:
            page += 1
        found = re.search(r'yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>', line)
        if found:
            y_min, x_max, y_max, text = found.groups()
            words.append((page, float(x_max), float(y_max) - float(y_min), text))
    return words


def test_every_table_of_the_demo_report_shows_all_its_columns(request, tmp_path):
    folder = _demo_report(tmp_path)
    pdf = folder / "report.pdf"
    _pdf_is_full_size_and_within_the_page(pdf)
    _contents_share_a_page_with_the_first_section(pdf)
    chromium = request.getfixturevalue("chromium")
    html = (folder / "report.html").read_text()
    assert html.count("<table") > 50  # the demo has PPI, safety and disparity tables
    assert 'class="note-mark"' in html and 'class="table-notes"' in html
    assert _overflows(chromium, html, width=1280, media="screen") == []
    assert _overflows(chromium, html, width=A4_CONTENT_PX, media="print") == []


def _pdf_is_full_size_and_within_the_page(pdf):
    info = subprocess.run([_tool("pdfinfo"), str(pdf)], capture_output=True, text=True).stdout
    width = float(re.search(r"Page size:\s+([\d.]+) x", info).group(1))
    words = _words(pdf)
    # Not shrunk to fit: a too-wide table makes Chromium scale every page down.
    assert statistics.median(height for _, _, height, _ in words) >= MIN_MEDIAN_WORD_PT
    edge = width - SIDE_MARGIN_PT + 1.0
    past = [(page, text) for page, right, _, text in words if right > edge]
    assert past == [], past[:10]


def _contents_share_a_page_with_the_first_section(pdf):
    text = subprocess.run(
        [_tool("pdftotext"), str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    (page,) = [page for page in text.split("\f") if re.search(r"^Contents$", page, re.M)]
    # The first section's title, once in the contents and once as its heading.
    first = re.search(r"1\. (Legal mapping[^\n]*)", page).group(1)
    assert page.count(first) >= 2, page[:2000]


def test_reflect_charts_print_at_the_full_width_of_the_page(request, tmp_path):
    call_command("seed_reflect_demo", stdout=io.StringIO())
    call_command(
        *("reflect_report", "--set", "reflect-demo-synthetic-faces", "--out", str(tmp_path)),
        *("--resamples", "20"),
        stdout=io.StringIO(),
    )
    html = (tmp_path / "report.html").read_text()
    chromium = request.getfixturevalue("chromium")
    page = chromium.new_page(viewport={"width": A4_CONTENT_PX, "height": 900})
    page.emulate_media(media="print")
    page.set_content(html, wait_until="load")
    widths = page.evaluate(
        """() => {
          const main = document.querySelector('main').getBoundingClientRect().width;
          return [...document.querySelectorAll('figure')].map((figure) => ({
            kind: figure.className, share: figure.getBoundingClientRect().width / main}));
        }"""
    )
    page.close()
    kinds = {figure["kind"] for figure in widths}
    assert {"figure-reflect_figure_4", "figure-reflect_jsd"} <= kinds
    narrow = [figure for figure in widths if figure["share"] < 0.95]
    assert narrow == []

"""Wide staff tables on a phone (issue 36 §4): at 390×844 every table wider than its box scrolls
sideways inside its own box and says so ("scroll →" above it, a shadow on the side with more
columns); none is clipped by a card, and no page scrolls sideways. Measured in headless
Chromium on the demo study; screenshots go to var/screenshots/ for a person to look at."""

from io import StringIO

import pytest
from django.core.management import call_command

from annotations.models import Batch
from tests.e2e.browser import SCREENSHOTS, log_in, no_sideways_scroll

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = (390, 844)

# Per visible table: whether it is wider than the box that shows it, and if so whether that box
# scrolls, is marked and has a visible hint; and any ancestor that clips it without scrolling.
TABLE_PROBLEMS = """() => {
  const problems = [];
  const visible = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  document.querySelectorAll('main table').forEach((table, index) => {
    if (!visible(table)) { return; }
    const name = `table ${index} (${table.id || table.className || 'no class'})`;
    const width = table.getBoundingClientRect().width;
    for (let el = table.parentElement; el && el !== document.body; el = el.parentElement) {
      const style = getComputedStyle(el);
      if (style.overflowX === 'visible') { continue; }
      if (width <= el.clientWidth + 1) { break; }
      if (style.overflowX === 'hidden' || style.overflowX === 'clip') {
        problems.push(`${name}: clipped by ${el.tagName}.${el.className} (${Math.round(width)} > ${el.clientWidth} px)`);
        break;
      }
      // It scrolls: the box must say so.
      if (!el.classList.contains('table-scroll') || !el.classList.contains('overflowing')) {
        problems.push(`${name}: scrolls in ${el.tagName}.${el.className} with no hint`);
      } else {
        const hint = el.previousElementSibling;
        if (!hint || !hint.classList.contains('scroll-hint') || hint.hidden || !visible(hint)) {
          problems.push(`${name}: no visible "scroll" line above its box`);
        }
        if (getComputedStyle(el).boxShadow === 'none') { problems.push(`${name}: no shadow`); }
      }
      break;
    }
  });
  return problems;
}"""


WIDEST = """() => [...document.querySelectorAll('main *')].filter((e) => {
  if (e.getBoundingClientRect().right <= window.innerWidth + 1) { return false; }
  for (let x = e.parentElement; x && x !== document.body; x = x.parentElement) {
    if (getComputedStyle(x).overflowX !== 'visible') { return false; }
  }
  return true;
}).slice(0, 1).map((e) => { const out = []; for (let x = e; x; x = x.parentElement) { out.push(`${x.tagName}.${x.className}#${x.id} ${Math.round(x.getBoundingClientRect().width)}`); } return out.join(' < ') + ' ' + e.getAttribute('src'); })"""


@pytest.fixture
def staff_page(live_server, django_user_model, chromium):
    call_command("seed_demo", stdout=StringIO())
    django_user_model.objects.create_user(username="lead", password="lead-pass-1", is_staff=True)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = chromium.new_page(viewport={"width": PHONE[0], "height": PHONE[1]})
    log_in(page, live_server.url, "lead", "lead-pass-1")
    page.set_default_timeout(180_000)  # the first visit computes the study's statistics
    return page


def test_wide_tables_scroll_in_their_box_with_a_hint_on_a_phone(staff_page, live_server):
    page, base = staff_page, live_server.url
    batch = Batch.objects.filter(study__slug="demo").exclude(policy="imported").first()
    problems, hints = [], 0
    for name, path in (
        ("study-list", "/staff/"),
        ("study", "/staff/studies/demo/"),
        ("people", "/staff/people/"),
        ("batch", f"/staff/batches/{batch.pk}/"),
        ("flags", "/staff/studies/demo/flags/"),
        ("annotators", "/staff/studies/demo/annotators/"),
    ):
        page.goto(f"{base}{path}")
        page.wait_for_load_state("networkidle")
        page.evaluate("document.querySelectorAll('main details').forEach(d => { d.open = true; })")
        page.wait_for_load_state("networkidle")  # the study page's detail tables load on open
        page.wait_for_timeout(300)
        found = page.evaluate(TABLE_PROBLEMS)
        hints += page.locator(".scroll-hint:visible").count()
        problems.extend(f"{path}: {problem}" for problem in found)
        page.screenshot(path=str(SCREENSHOTS / f"staff-tables-{name}-390x844.png"), full_page=True)
        if not no_sideways_scroll(page):
            problems.append(f"{path} scrolls sideways: " + str(page.evaluate(WIDEST)))
    assert not problems, "\n".join(problems)
    assert hints >= 1  # some table was wider than a phone

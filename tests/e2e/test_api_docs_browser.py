"""Issue 21 §1.8: a readable API docs page (Swagger UI from local static files, staff only,
under the real CSP) and /favicon.ico."""

import pytest

from tests.e2e.browser import SCREENSHOTS, log_in
from tests.e2e.test_csp_browser import _watch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_api_docs_page_renders_the_endpoints_under_the_csp(
    live_server, browser_page, django_user_model
):
    page, base = browser_page, live_server.url
    django_user_model.objects.create_superuser(username="lead", password="lead-pass-1")
    problems = _watch(page)
    log_in(page, base, "lead", "lead-pass-1")
    page.set_viewport_size({"width": 1280, "height": 720})
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(f"{base}/api/docs/")
    page.wait_for_selector(".opblock-tag", timeout=30_000)
    assert "/api/studies/" in page.inner_text("#swagger-ui")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "api-docs-1280.png"))
    problems.extend(page.evaluate("window.__cspViolations || []"))
    assert not problems, problems
    assert all(url.startswith(base) for url in requests), "a file came from outside the app"
    response = page.goto(f"{base}/favicon.ico")
    assert response.status == 200 and response.headers["content-type"].startswith("image/")


def test_the_api_docs_page_is_staff_only(client, django_user_model):
    assert client.get("/api/docs/").status_code in (302, 401, 403)
    user = django_user_model.objects.create_user(username="annotator", password="pw-x-12345")
    client.force_login(user)
    assert client.get("/api/docs/").status_code == 403

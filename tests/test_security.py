"""Security settings that hold on every page: login throttling, CSP, HTTPS cookies, the schema."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "pw-for-tests-1"


def _login(client, username, password, address="10.0.0.1"):
    return client.post(
        reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address
    )


def _logged_in(client) -> bool:
    return "_auth_user_id" in client.session


# --- login throttling (django-axes) ---------------------------------------------------------


@pytest.mark.django_db
def test_25_wrong_passwords_lock_the_account_and_the_right_one_then_fails(client, annotators):
    statuses = [_login(client, "ann0", f"wrong-{i}").status_code for i in range(25)]
    assert 429 in statuses, "repeated failures were never refused"
    response = _login(client, "ann0", PASSWORD)
    assert response.status_code == 429
    assert not _logged_in(client)


@pytest.mark.django_db
def test_lockout_is_per_username_from_any_address(client, settings, annotators):
    for i in range(settings.AXES_FAILURE_LIMIT):
        _login(client, "ann0", "wrong", address=f"10.0.1.{i}")
    assert _login(client, "ann0", PASSWORD, address="10.0.2.1").status_code == 429
    assert not _logged_in(client)
    # Another user, from an address that never failed, is not affected.
    assert _login(client, "ann1", PASSWORD, address="10.0.2.2").status_code == 302


@pytest.mark.django_db
def test_lockout_is_per_address_for_any_username(client, settings, annotators):
    for i in range(settings.AXES_FAILURE_LIMIT):
        _login(client, f"nobody-{i}", "wrong", address="10.0.3.1")
    assert _login(client, "ann1", PASSWORD, address="10.0.3.1").status_code == 429
    assert _login(client, "ann1", PASSWORD, address="10.0.3.2").status_code == 302


@pytest.mark.django_db
def test_a_few_failures_then_success_logs_in(client, settings, annotators):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert _login(client, "ann0", "wrong").status_code == 200
    assert _login(client, "ann0", PASSWORD).status_code == 302
    assert _logged_in(client)


@pytest.mark.django_db
def test_staff_unlock_with_axes_reset(client, settings, annotators):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        _login(client, "ann0", "wrong")
    assert _login(client, "ann0", PASSWORD).status_code == 429
    call_command("axes_reset_username", "ann0", stdout=open("/dev/null", "w"))
    call_command("axes_reset", stdout=open("/dev/null", "w"))
    assert _login(client, "ann0", PASSWORD).status_code == 302


# --- Content-Security-Policy ----------------------------------------------------------------


def _directives(policy: str) -> dict[str, str]:
    parts = (part.strip() for part in policy.split(";"))
    return dict((part.split(" ", 1) + [""])[:2] for part in parts if part)


@pytest.mark.django_db
def test_pages_carry_a_csp_without_unsafe_inline_scripts(client):
    response = client.get(reverse("login"))
    policy = response["Content-Security-Policy"]
    directives = _directives(policy)
    assert directives["script-src"] == "'self'"
    assert "'unsafe-inline'" not in policy and "'unsafe-eval'" not in policy
    assert "frame-ancestors 'none'" in policy


INLINE_HANDLER = re.compile(r"\son[a-z]+\s*=", re.IGNORECASE)
STYLE_ATTRIBUTE = re.compile(r"\sstyle\s*=", re.IGNORECASE)
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\ssrc=)[^>]*>", re.IGNORECASE)
STYLE_BLOCK = re.compile(r"<style(?![^>]*\snonce=)[^>]*>", re.IGNORECASE)
# htmx features that evaluate strings as code (off: base.html sets allowEval false).
HTMX_EVAL = re.compile(r"hx-on|hx-vars|hx-trigger=\S*\[|[\"']js:", re.IGNORECASE)
# A downloaded, self-contained file (no server, so no CSP applies to it).
STANDALONE_FILES: set[str] = set()


def _served_templates():
    for folder in [ROOT / "templates", *ROOT.glob("*/templates")]:
        for path in folder.rglob("*.html"):
            name = path.relative_to(folder).as_posix()
            if name not in STANDALONE_FILES:
                yield name, path.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "pattern, what",
    [
        (INLINE_HANDLER, "an inline event handler (on...=)"),
        (STYLE_ATTRIBUTE, "a style attribute"),
        (INLINE_SCRIPT, "an inline <script> (move it to static/)"),
        (STYLE_BLOCK, "a <style> block without the CSP nonce"),
        (HTMX_EVAL, "an htmx attribute that evaluates code (hx-on, hx-vars, js:, [filter])"),
    ],
)
def test_templates_stay_within_the_csp(pattern, what):
    offenders = [
        name
        for name, text in _served_templates()
        for match in pattern.finditer(text)
        if "application/json" not in match.group(0)  # data, never executed
    ]
    assert not offenders, f"{what} in {sorted(set(offenders))}: blocked by the CSP"


# --- HTTPS ----------------------------------------------------------------------------------


def _settings_under(env: dict) -> dict:
    code = (
        "import django, json; from django.conf import settings; django.setup(); "
        "print(json.dumps({k: getattr(settings, k) for k in ("
        "'SESSION_COOKIE_SECURE','CSRF_COOKIE_SECURE','SECURE_HSTS_SECONDS','SECURE_SSL_REDIRECT')}))"
    )
    import json
    import os

    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "acrb_web.settings", **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_https_setting_makes_cookies_secure_and_sends_hsts():
    served = _settings_under({"ACRB_HTTPS": "1"})
    assert served["SESSION_COOKIE_SECURE"] and served["CSRF_COOKIE_SECURE"]
    assert served["SECURE_HSTS_SECONDS"] >= 31536000
    assert served["SECURE_SSL_REDIRECT"]
    local = _settings_under({"ACRB_HTTPS": "0"})
    assert not local["SESSION_COOKIE_SECURE"] and local["SECURE_HSTS_SECONDS"] == 0


@pytest.mark.django_db
def test_https_response_has_hsts_and_secure_cookies(client, settings, annotators):
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = True
    settings.SECURE_HSTS_SECONDS = 31536000
    page = client.get(reverse("login"), secure=True)
    assert page["Strict-Transport-Security"].startswith("max-age=31536000")
    assert page.cookies["csrftoken"]["secure"]
    response = client.post(
        reverse("login"), {"username": "ann0", "password": PASSWORD}, secure=True
    )
    assert response.cookies["sessionid"]["secure"] and response.cookies["sessionid"]["httponly"]


# --- the API schema -------------------------------------------------------------------------


@pytest.mark.django_db
def test_api_schema_is_staff_only(client, annotators, staff_user):
    assert client.get("/api/schema/").status_code in (401, 403)
    client.force_login(annotators[0].user)
    assert client.get("/api/schema/").status_code == 403
    client.force_login(staff_user)
    assert client.get("/api/schema/").status_code == 200


@pytest.mark.django_db
def test_only_the_browsable_api_relaxes_styles_and_never_scripts(staff_client, study):
    page = staff_client.get("/api/studies/", HTTP_ACCEPT="text/html")
    directives = _directives(page["Content-Security-Policy"])
    assert directives["style-src"] == "'self' 'unsafe-inline'"
    assert directives["script-src"] == "'self'"
    staff_page = staff_client.get(reverse("staff:study_list"))["Content-Security-Policy"]
    assert "'unsafe-inline'" not in staff_page

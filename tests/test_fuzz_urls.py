"""No 500 on any input (issue 20 item 7): every URL pattern of the app, with hostile path
values (integers past 64 bits, overlong slugs, non-ASCII, NUL, climbing paths) and hostile
query and form values (the same, in every parameter name the code reads), by GET and POST, as
staff and as an annotator. Every answer is a 2xx, 3xx or 4xx; never a 5xx.

Runs in the normal suite (CI, SQLite and PostgreSQL) in well under a minute: the admin's 200
patterns are tried by GET with one hostile set each, the app's by every combination.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import URLResolver, get_resolver

from tests.support.django_fixtures import client_for

ROOT = Path(__file__).resolve().parents[1]
HUGE = "9" * 30
PAST_INT64 = str(2**63)
HOSTILE_TEXT = ["\u00fc\u4e2d\x00\u202e", "a" * 3000, "-1", HUGE, PAST_INT64]
CONVERTER = re.compile(r"<(?:(?P<kind>[a-z]+):)?(?P<name>\w+)>")
# Parameters every list or page may read, besides those found in the code below.
# Logging out would make every later request a redirect to the login page.
NOT_FUZZED = {"accounts/logout/", "admin/logout/"}
STAFF_ONLY = ("admin/", "staff/", "api/")
PAGING = ["limit", "offset", "page", "p", "cursor"]
COMMON_PARAMETERS = {"limit", "offset", "page", "p", "o", "q", "format", "cursor", "ordering"}


def url_patterns() -> list[str]:
    found = []

    def walk(patterns, prefix):
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, route)
            else:
                found.append(route)

    walk(get_resolver().url_patterns, "")
    return found


def parameter_names() -> list[str]:
    """Every GET/POST parameter and form field name the app's code reads."""
    names = set(COMMON_PARAMETERS)
    read = re.compile(r"""(?:GET|POST|data|query_params)(?:\.get(?:list)?\(|\[)\s*["'](\w+)["']""")
    field = re.compile(r"^\s+(\w+) = forms\.\w+", re.MULTILINE)
    for package in ("annotations", "generation", "scoring"):
        for path in (ROOT / package).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            names.update(read.findall(text))
            names.update(field.findall(text))
    return sorted(names)


def _fill(route: str, value_for) -> str | None:
    if route.startswith("^") or "(?P" in route:  # a regex route (the admin's app index)
        route = re.sub(r"\(\?P<\w+>[^)]*\)", "annotations", route).strip("^$")
        route = route.replace("\\", "")
    path = CONVERTER.sub(lambda m: value_for(m.group("kind") or "str", m.group("name")), route)
    return "/" + path


def hostile_paths(route: str, slug: str) -> list[str]:
    """The route with its path values hostile in turn (the others plausible)."""
    plausible = {"int": "1", "slug": slug, "str": "csv", "path": "1", "uuid": "0" * 32}
    variants = [
        {"int": HUGE, "slug": slug, "str": "\u00fc%00", "path": HUGE},
        {"int": PAST_INT64, "slug": "s" * 300, "str": "a" * 1000, "path": "%00"},
        plausible,
    ]
    if not CONVERTER.search(route):
        variants = [plausible]
    paths = []
    for values in variants:
        path = _fill(route, lambda kind, name, v=values: v.get(kind, "1"))
        if path not in paths:
            paths.append(path)
    return paths


def hostile_data(names: list[str], value: str) -> dict[str, str]:
    return {name: value for name in names}


@pytest.fixture
def clients(batch, annotators, db):
    staff = get_user_model().objects.create_superuser("fuzz-root", "f@example.org", "pw-fuzz-1")
    staff_client = Client(raise_request_exception=False)
    staff_client.force_login(staff)
    annotator = client_for(annotators[0], client_class=Client)
    annotator.raise_request_exception = False
    return {"staff": staff_client, "annotator": annotator}


def _answers(client, method, path, data):
    try:
        if method == "get":
            return client.get(path, data).status_code
        return client.post(path, data).status_code
    except Exception as exc:  # noqa: BLE001 - a test client exception is the 500 we look for
        return f"{type(exc).__name__}: {exc}"[:200]


@pytest.mark.django_db
def test_no_url_answers_500_to_hostile_values(clients, batch):
    names = parameter_names()
    slug = batch.study.slug
    failures = []
    for route in url_patterns():
        if route in NOT_FUZZED:
            continue
        admin = route.startswith("admin/")
        paths = hostile_paths(route, slug)[: 1 if admin else None]
        for path in paths:
            for who, client in clients.items():
                if who != "staff" and route.startswith(STAFF_ONLY):
                    continue  # a 403 at the door (tests/test_permissions.py covers the door)
                for method in ("get",) if admin else ("get", "post"):
                    # Every hostile value with plausible path values; one with hostile ones.
                    deep = not admin and path == paths[-1]
                    for value in HOSTILE_TEXT if deep else HOSTILE_TEXT[:1]:
                        status = _answers(client, method, path, hostile_data(names, value))
                        for name in PAGING if deep and method == "get" and value == HUGE else ():
                            # Each paging parameter alone: with the others hostile too (a bad
                            # ?format=, a negative offset) the view answers before paging.
                            if isinstance(status, int) and status < 500:
                                status = _answers(client, method, path, {name: value})
                        if not isinstance(status, int) or status >= 500:
                            failures.append(
                                f"{who} {method.upper()} {path[:120]} {value[:12]!r}: {status}"
                            )
    assert not failures, f"{len(failures)} answers of 500:\n" + "\n".join(failures[:60])


@pytest.mark.django_db
def test_the_issues_examples(clients, batch):
    annotator, staff = clients["annotator"], clients["staff"]
    assert annotator.get(f"/batches/{HUGE}/next/").status_code == 404
    assert staff.get(f"/staff/batches/{PAST_INT64}/").status_code == 404
    assert staff.get(f"/api/studies/?limit={HUGE}&offset=-1").status_code == 200
    assert staff.get(f"/api/studies/?limit=5&offset={HUGE}").status_code == 200
    response = staff.post(f"/staff/batches/{batch.pk}/add-annotators/", {"annotators": HUGE})
    # The form's own error (a page, or a redirect with a message) or the middleware's 400.
    assert response.status_code in (200, 302, 400)

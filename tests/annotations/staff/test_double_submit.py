"""Staff forms submitted twice, or four times at once, do their work once (issue 36 §2): People →
create accounts and New plan carry a one-time key (annotations.common.form_keys), recorded under
a unique constraint in the transaction that does the work. Run by CI on SQLite and on PostgreSQL
(DATABASE_URL=postgres://…), where the four POSTs truly overlap; and the limits the app checks
before the database does (a 130-character group, a 23-digit seed)."""

from __future__ import annotations

import json
import re
import threading

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotations.models import Annotator, FormSubmission, Study
from generation.models import PlannedPrompt, StudyPlan
from tests.generation.conftest import BASE_PROMPTS

pytestmark = pytest.mark.django_db(transaction=True)
COPIES = 4


def _post_together(user, url: str, data: dict, files=None) -> list:
    """``COPIES`` identical POSTs, each from its own logged-in client, released at once."""
    clients = []
    for _ in range(COPIES):
        client = Client()
        client.force_login(user)
        clients.append(client)
    barrier = threading.Barrier(COPIES)
    responses: list = [None] * COPIES

    def post(index: int) -> None:
        try:
            payload = dict(data)
            if files:
                payload |= {name: make() for name, make in files.items()}
            barrier.wait()
            responses[index] = clients[index].post(url, payload)
        except Exception as exc:  # noqa: BLE001 - collected for the assertions
            responses[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=post, args=(i,)) for i in range(COPIES)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return responses


def _credentials(response) -> dict[str, str]:
    """The user names and passwords a credentials page shows."""
    html = response.content.decode()
    return dict(re.findall(r"<tr><td>([^<]+)</td><td><code>([^<]+)</code></td></tr>", html))


def _works(username: str, password: str) -> bool:
    return get_user_model().objects.get(username=username).check_password(password)


# --- People → create accounts -----------------------------------------------------------------


def _accounts_key(staff_client) -> str:
    page = staff_client.get(reverse("staff:people"))
    return page.context["form"].initial.get("request_key", "")


def test_four_identical_account_posts_make_each_account_once(staff_client, staff_user):
    data = {
        "usernames": "ana\nbola",
        "group": "Nigerian",
        "request_key": _accounts_key(staff_client),
    }
    responses = _post_together(staff_user, reverse("staff:people_create"), data)
    assert [getattr(r, "status_code", r) for r in responses] == [200] * COPIES
    assert sorted(Annotator.objects.values_list("user__username", flat=True)) == ["ana", "bola"]
    assert FormSubmission.objects.count() == 1
    shown = [_credentials(r) for r in responses]
    assert all(sorted(s) == ["ana", "bola"] for s in shown), shown
    # The answer read last holds the passwords that work: each submit after the first gave the
    # still-unused accounts new ones (the one who clicked twice never saw the first answer).
    working = [s for s in shown if all(_works(u, p) for u, p in s.items())]
    assert working, "no answer holds working passwords"


def test_a_resubmit_after_a_login_makes_nothing_and_says_why(staff_client):
    data = {"usernames": "ana", "request_key": _accounts_key(staff_client)}
    first = staff_client.post(reverse("staff:people_create"), data)
    password = _credentials(first)["ana"]
    # ana signs in: the account is in use now (a login sets last_login).
    get_user_model().objects.filter(username="ana").update(last_login=timezone.now())
    again = staff_client.post(reverse("staff:people_create"), data)
    assert again.status_code == 400
    assert "already created its accounts, and they have been used since" in again.content.decode()
    assert _works("ana", password)  # not changed behind their back
    assert get_user_model().objects.filter(username="ana").count() == 1


def test_another_users_key_is_refused(staff_client, django_user_model):
    data = {"usernames": "ana", "request_key": _accounts_key(staff_client)}
    staff_client.post(reverse("staff:people_create"), data)
    other = django_user_model.objects.create_user(
        "staff2", password="pw-for-tests-1", is_staff=True
    )
    client = Client()
    client.force_login(other)
    response = client.post(reverse("staff:people_create"), {**data, "usernames": "bola"})
    assert response.status_code == 400 and "reload the page" in response.content.decode()
    assert not get_user_model().objects.filter(username="bola").exists()


# --- New plan ---------------------------------------------------------------------------------


def test_four_identical_plan_posts_store_one_study_and_one_plan(staff_client, staff_user, tmp_path):
    path = tmp_path / "base.json"
    path.write_text(json.dumps(BASE_PROMPTS), encoding="utf-8")
    key = (
        staff_client.get(reverse("generation:plan_new"))
        .context["form"]
        .initial.get("request_key", "")
    )
    data = {
        "slug": "twice",
        "name": "Twice",
        "base_prompts": "upload",
        "attributes": ["gender"],
        "sample_seed": 0,
        "missing_slot": "skip",
        "request_key": key,
    }
    files = {"base_prompts_file": lambda: path.open("rb")}
    responses = _post_together(staff_user, reverse("generation:plan_new"), data, files)
    assert [getattr(r, "status_code", r) for r in responses] == [302] * COPIES
    assert {r["Location"] for r in responses} == {reverse("generation:study_plan", args=["twice"])}
    assert Study.objects.filter(slug="twice").count() == 1
    assert StudyPlan.objects.count() == 1
    rows = PlannedPrompt.objects.filter(study__slug="twice")
    assert rows.count() == len({(r.prompt_id, r.attribute, r.value) for r in rows})


@pytest.mark.parametrize("field", ["sample_seed", "sample_size", "harmful_seed"])
def test_the_plan_form_bounds_its_numbers(staff_client, field):
    data = {"slug": "big", "base_prompts": "acrb", "sample_seed": 0, "missing_slot": "skip"}
    data[field] = "1" * 23
    response = staff_client.post(reverse("generation:plan_new"), data)
    assert response.status_code == 400
    assert "Ensure this value is less than or equal to" in response.content.decode()
    assert not Study.objects.exists()


# --- limits checked by the app, not left to the database ---------------------------------------


def test_a_group_longer_than_its_column_is_refused_on_every_path(staff_client, study):
    group = "g" * 130
    with pytest.raises(CommandError, match="group: 130 characters, over the limit of 100"):
        call_command("create_annotators", "ana", "--group", group)
    assert not get_user_model().objects.filter(username="ana").exists()
    with pytest.raises(CommandError, match="--group: 130 characters, over the limit of 100"):
        call_command(
            "create_invites", "--study", study.slug, "--batch", "x", "--group", group,
            "--base-url", "https://acrb.example.org",
        )  # fmt: skip
    with pytest.raises(CommandError, match="--name: 201 characters, over the limit of 200"):
        call_command("plan_study", "--study", "new-one", "--create", "--name", "n" * 201)
    assert not Study.objects.filter(slug="new-one").exists()

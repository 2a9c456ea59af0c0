"""People: annotator accounts created, access reset, paused and resumed, from the staff pages
and the commands (annotations/staff/people.py, people_views.py)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotations.models import Annotator, AnnotatorReview, Assignment
from tests.support.django_fixtures import client_for

pytestmark = pytest.mark.django_db


def password_works(username: str, password: str) -> bool:
    return get_user_model().objects.get(username=username).check_password(password)


def test_create_accounts_shows_each_password_once_and_they_work(staff_client):
    response = staff_client.post(
        reverse("staff:people_create"), {"usernames": "ana\nbola, chidi", "group": "Nigerian"}
    )
    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    rows = response.context["credentials"]
    assert [c.username for c in rows] == ["ana", "bola", "chidi"]
    assert all(c.password in response.content.decode() for c in rows)
    assert set(Annotator.objects.values_list("group", flat=True)) == {"Nigerian"}
    assert password_works("bola", rows[1].password)


def test_create_accounts_lists_every_problem_and_creates_none(staff_client, annotators):
    taken = annotators[0].user.username
    response = staff_client.post(
        reverse("staff:people_create"), {"usernames": f"ok1\nbad name!\nok1\n{taken}"}
    )
    assert response.status_code == 400
    body = response.content.decode()
    assert "&#x27;bad name!&#x27;: only letters" in body
    assert "&#x27;ok1&#x27; is listed twice" in body
    assert f"&#x27;{taken}&#x27; is already an account" in body
    assert not get_user_model().objects.filter(username="ok1").exists()


def test_reset_access_changes_the_password_and_signs_the_annotator_out(staff_client, annotators):
    annotator = annotators[0]
    annotator_client = client_for(annotator)
    assert annotator_client.get(reverse("annotations:home")).status_code == 200
    response = staff_client.post(reverse("staff:annotator_access_reset", args=[annotator.pk]))
    password = response.context["credentials"][0].password
    assert response.status_code == 200 and password in response.content.decode()
    # The old session is signed with the old password hash: it no longer works.
    assert annotator_client.get(reverse("annotations:home")).status_code == 302
    assert password_works(annotator.user.username, password)


def test_reset_access_refuses_staff_accounts(staff_client, staff_user):
    staff_annotator = Annotator.objects.create(user=staff_user)
    old = staff_user.password
    response = staff_client.post(
        reverse("staff:annotator_access_reset", args=[staff_annotator.pk]), follow=True
    )
    assert "is a staff account" in response.content.decode()
    staff_user.refresh_from_db()
    assert staff_user.password == old


def test_pause_and_resume_from_the_page(staff_client, batch, annotators):
    annotator = annotators[0]
    open_before = Assignment.objects.filter(
        annotator=annotator, is_active=True, answered_at__isnull=True
    ).count()
    assert open_before
    response = staff_client.post(
        reverse("staff:annotator_pause", args=[annotator.pk]), {"reason": "too fast"}, follow=True
    )
    assert f"{annotator} paused" in response.content.decode()
    annotator.refresh_from_db()
    assert not annotator.is_active
    assert not Assignment.objects.filter(
        annotator=annotator, is_active=True, answered_at__isnull=True
    ).exists()
    again = staff_client.post(reverse("staff:annotator_pause", args=[annotator.pk]), follow=True)
    assert "Nothing changed: " in again.content.decode()
    staff_client.post(reverse("staff:annotator_resume", args=[annotator.pk]))
    annotator.refresh_from_db()
    assert annotator.is_active
    assert list(
        AnnotatorReview.objects.filter(annotator=annotator)
        .values_list("action", flat=True)
        .order_by("pk")
    ) == ["pause", "resume"]


def test_people_page_lists_annotators_with_counts(
    staff_client, batch, annotators, django_assert_max_num_queries
):
    with django_assert_max_num_queries(12):
        response = staff_client.get(reverse("staff:people"))
    body = response.content.decode()
    assert response.status_code == 200
    assert all(a.user.username in body for a in annotators)


def test_annotators_cannot_act_on_people(annotators):
    client = client_for(annotators[0])
    target = annotators[1]
    old = target.user.password
    assert client.post(reverse("staff:people_create"), {"usernames": "x"}).status_code == 403
    assert client.post(reverse("staff:annotator_access_reset", args=[target.pk])).status_code == 403
    assert client.post(reverse("staff:annotator_pause", args=[target.pk])).status_code == 403
    target.refresh_from_db()
    target.user.refresh_from_db()
    assert target.is_active and target.user.password == old
    assert not get_user_model().objects.filter(username="x").exists()


def test_unknown_annotator_is_404(staff_client):
    assert (
        staff_client.post(reverse("staff:annotator_access_reset", args=[999_999])).status_code
        == 404
    )


# --- the commands ----------------------------------------------------------------------------


def test_create_annotators_command_prints_names_and_passwords():
    out = StringIO()
    call_command("create_annotators", "ana", "bola", "--group", "Korean", stdout=out)
    lines = [line.split("\t") for line in out.getvalue().splitlines()]
    assert [name for name, _ in lines] == ["ana", "bola"]
    assert password_works("ana", lines[0][1])


def test_create_annotators_command_is_all_or_nothing(annotators):
    with pytest.raises(CommandError, match="nothing was created: .*already an account"):
        call_command("create_annotators", "fresh", annotators[0].user.username, stdout=StringIO())
    assert not get_user_model().objects.filter(username="fresh").exists()


def test_reset_access_and_pause_commands(batch, annotators):
    name = annotators[0].user.username
    out = StringIO()
    call_command("reset_access", name, stdout=out)
    assert password_works(name, out.getvalue().strip().split("\t")[1])
    out = StringIO()
    call_command("pause_annotator", name, "--reason", "left", stdout=out)
    assert "paused" in out.getvalue()
    assert not Annotator.objects.get(pk=annotators[0].pk).is_active
    with pytest.raises(CommandError, match="already paused"):
        call_command("pause_annotator", name, stdout=StringIO())
    call_command("pause_annotator", name, "--resume", stdout=StringIO())
    assert Annotator.objects.get(pk=annotators[0].pk).is_active
    with pytest.raises(CommandError, match="no annotator is called 'nobody'"):
        call_command("reset_access", "nobody", stdout=StringIO())

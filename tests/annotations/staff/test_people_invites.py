"""Invite links from the People page: made by the recruitment service, shown once, one invite per
form however often it is submitted, refused in one line without a consent text, staff only
(annotations/staff/people_views.py, annotations/recruitment/invites.py)."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.db import IntegrityError, transaction
from django.urls import reverse

from annotations.models import Annotator, Batch
from annotations.recruitment import enrolment, invites
from annotations.recruitment.consent import consent_publish
from annotations.recruitment.models import InviteLink
from annotations.recruitment.rules import RecruitmentError
from tests.support.django_fixtures import client_for

pytestmark = pytest.mark.django_db

URL = "/staff/people/invites/"


@pytest.fixture
def open_batch(imported_study):
    consent_publish(study=imported_study, consent_text="You will label images.")
    return enrolment.recruitment_batch_create(
        study=imported_study,
        name="recruits",
        policy=Batch.Policy.K_OVERLAP,
        overlap_k=1,
        items_per_annotator=2,
        seed=5,
    )


def _form(staff_client) -> dict:
    """The fields of the invite form as the People page renders them (its one-time key too)."""
    page = staff_client.get(reverse("staff:people"))
    key = page.context["invite_form"].initial["request_key"]
    return {"request_key": key, "count": 1, "days": 14, "language": "", "group": ""}


def _links(response) -> list[str]:
    return re.findall(r"https?://[^\s<\"]+/join/[A-Za-z0-9_-]+/", response.content.decode())


def test_people_page_invites_a_named_person_and_shows_the_link_once(staff_client, open_batch):
    data = {**_form(staff_client), "batch": open_batch.pk, "invitee": "ana@example.org"}
    data["language"] = "fr"
    response = staff_client.post(URL, data)
    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    [url] = _links(response)
    link = InviteLink.objects.get()
    assert (link.note, link.language, link.batch) == ("ana@example.org", "fr", open_batch)
    # the list shows the person and the status; the link itself is never shown again
    page = staff_client.get(reverse("staff:people")).content.decode()
    assert "ana@example.org" in page and 'class="invite-pending"' in page
    assert url.split("/join/")[1] not in page

    # the person opens it, agrees and starts in the invite's language
    person = client_for_anonymous()
    consent_page = person.get(url)
    assert consent_page.status_code == 200 and consent_page["Content-Language"] == "fr"
    person.post(url, {"agree": "yes", "consent_id": open_batch.study.consent_versions.get().pk})
    annotator = Annotator.objects.get(invite_link=link)
    assert annotator.language == "fr"
    page = staff_client.get(reverse("staff:people")).content.decode()
    assert 'class="invite-accepted"' in page and annotator.user.username in page


def client_for_anonymous():
    from django.test import Client

    return Client()


def test_invite_n_anonymous_links_in_one_go(staff_client, open_batch):
    data = {**_form(staff_client), "batch": open_batch.pk, "count": 3, "group": "Nigerian"}
    response = staff_client.post(URL, data)
    assert response.status_code == 200 and len(set(_links(response))) == 3
    assert list(InviteLink.objects.values_list("group", flat=True)) == ["Nigerian"] * 3


def test_htmx_answer_is_the_invite_section_only(staff_client, open_batch):
    data = {**_form(staff_client), "batch": open_batch.pk, "invitee": "Bola"}
    response = staff_client.post(URL, data, headers={"HX-Request": "true"})
    body = response.content.decode()
    assert response.status_code == 200 and body.lstrip().startswith('<section id="people-invites"')
    assert "<html" not in body and len(_links(response)) == 1
    refused = staff_client.post(URL, {**data, "invitee": "x@"}, headers={"HX-Request": "true"})
    # htmx swaps only 2xx answers: the refusal comes back as a 200 fragment with the error
    assert refused.status_code == 200 and "Enter a valid email address" in refused.content.decode()


def test_a_resubmitted_form_makes_one_invite_with_a_working_link(staff_client, open_batch):
    data = {**_form(staff_client), "batch": open_batch.pk, "invitee": "ana@example.org"}
    first = _links(staff_client.post(URL, data))
    second = _links(staff_client.post(URL, data))
    assert InviteLink.objects.count() == 1
    # the second answer (the one a double click leaves on screen) carries the working link
    assert len(second) == 1 and second != first
    token = second[0].rstrip("/").rsplit("/", 1)[1]
    assert invites.invite_lookup(token=token)[1].usable
    assert not invites.invite_lookup(token=first[0].rstrip("/").rsplit("/", 1)[1])[1].usable


def test_the_database_refuses_a_second_invite_for_one_form_slot(open_batch, staff_user):
    invites.invite_links_create(
        batch=open_batch, group="", request_key="k" * 40, created_by=staff_user
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        InviteLink.objects.create(
            batch=open_batch,
            token_sha256="0" * 64,
            request_key="k" * 40,
            request_index=0,
            expires_at=open_batch.created_at,
        )


def test_a_form_key_cannot_be_replayed_for_another_batch(open_batch, imported_study, staff_user):
    other = enrolment.recruitment_batch_create(
        study=imported_study, name="other", policy="k_overlap", overlap_k=1, items_per_annotator=1
    )
    invites.invite_links_create(
        batch=open_batch, group="", request_key="k" * 40, created_by=staff_user
    )
    with pytest.raises(RecruitmentError, match="reload the page"):
        invites.invite_links_create(
            batch=other, group="", request_key="k" * 40, created_by=staff_user
        )
    assert InviteLink.objects.count() == 1


@pytest.mark.parametrize(
    "change, problem",
    [
        ({"invitee": "ana@"}, "Enter a valid email address"),
        ({"invitee": "a" * 201}, "at most 200 characters"),
        ({"group": "g" * 101}, "at most 100 characters"),
        ({"batch": 999999}, "Select a valid choice"),
        ({"batch": "nope"}, "Select a valid choice"),
        ({"count": 51}, "less than or equal to 50"),
        ({"count": 0}, "greater than or equal to 1"),
        ({"count": 2, "invitee": "Ana"}, "One link per named person"),
        ({"language": "xx"}, "Select a valid choice"),
        ({"days": 366}, "less than or equal to 365"),
        ({"request_key": "k" * 65}, "at most 64 characters"),
        ({"request_key": ""}, "This field is required"),
    ],
)
def test_hostile_values_are_refused_in_one_line_and_make_nothing(
    staff_client, open_batch, change, problem
):
    data = {**_form(staff_client), "batch": open_batch.pk, **change}
    response = staff_client.post(URL, data)
    assert response.status_code == 400
    assert problem in response.content.decode()
    assert not InviteLink.objects.exists()


def test_a_study_without_consent_offers_no_invites_and_says_how_to_publish(
    staff_client, imported_study
):
    batch = enrolment.recruitment_batch_create(
        study=imported_study, name="early", policy="k_overlap", overlap_k=1, items_per_annotator=1
    )
    page = staff_client.get(reverse("staff:people")).content.decode()
    assert "no consent text yet" in page
    assert reverse("recruitment:staff_page", args=[imported_study.slug]) in page
    assert "publish_consent --study test-study" in page
    assert 'id="people-invite-form"' not in page
    response = staff_client.post(URL, {**_form(staff_client), "batch": batch.pk})
    assert response.status_code == 400 and not InviteLink.objects.exists()


def test_the_service_refuses_a_study_without_consent(imported_study):
    batch = enrolment.recruitment_batch_create(
        study=imported_study, name="early", policy="k_overlap", overlap_k=1, items_per_annotator=1
    )
    with pytest.raises(RecruitmentError, match="no consent text yet: publish one first"):
        invites.invite_links_create(batch=batch, group="")


def test_a_study_with_consent_but_no_batch_says_how_to_make_one(staff_client, imported_study):
    consent_publish(study=imported_study, consent_text="You will label images.")
    page = staff_client.get(reverse("staff:people")).content.decode()
    assert "no batch recruits can join yet" in page


def test_invites_from_the_people_page_are_staff_only(client, open_batch, annotators):
    data = {"batch": open_batch.pk, "count": 1, "days": 14, "request_key": "k" * 40}
    anonymous = client.post(URL, data)
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    annotator = client_for(annotators[0])
    assert annotator.post(URL, data).status_code == 403
    assert annotator.get(reverse("staff:people")).status_code == 403
    assert not InviteLink.objects.exists()


def test_get_is_not_allowed(staff_client):
    assert staff_client.get(URL).status_code == 405


def test_the_persons_own_language_choice_wins_over_the_invites(open_batch, client):
    [(link, token)] = invites.invite_links_create(batch=open_batch, group="", language="fr")
    url = reverse("recruitment:invite", args=[token])
    client.cookies["django_language"] = "en"  # the switcher on the consent page, before agreeing
    assert client.get(url)["Content-Language"] == "en"
    client.post(url, {"agree": "yes", "consent_id": open_batch.study.consent_versions.get().pk})
    assert Annotator.objects.get(invite_link=link).language == "en"


def test_an_invite_without_a_language_leaves_the_browser_in_charge(open_batch, client):
    [(link, token)] = invites.invite_links_create(batch=open_batch, group="")
    url = reverse("recruitment:invite", args=[token])
    page = client.get(url, headers={"Accept-Language": "fr"})
    assert page["Content-Language"] == "fr"
    client.post(url, {"agree": "yes", "consent_id": open_batch.study.consent_versions.get().pk})
    assert Annotator.objects.get(invite_link=link).language == ""


def test_the_recruitment_page_form_is_idempotent_too(staff_client, open_batch):
    slug = open_batch.study.slug
    page = staff_client.get(reverse("recruitment:staff_page", args=[slug]))
    key = page.context["invite_form"].initial["request_key"]
    data = {"batch": open_batch.pk, "count": 2, "days": 14, "request_key": key}
    url = reverse("recruitment:staff_invites_create", args=[slug])
    staff_client.post(url, data)
    again = staff_client.post(url, data)
    assert InviteLink.objects.count() == 2 and len(set(_links(again))) == 2


def test_create_invites_command_takes_a_language(open_batch):
    from django.core.management import CommandError, call_command

    argv = ["--study", open_batch.study.slug, "--batch", "recruits", "--base-url", "http://x"]
    call_command("create_invites", *argv, "--language", "fr", stdout=StringIO())
    assert InviteLink.objects.get().language == "fr"
    with pytest.raises(CommandError, match="invalid choice: 'xx'"):
        call_command("create_invites", *argv, "--language", "xx")


@pytest.mark.parametrize(
    "base_url",
    [
        "javascript:alert(1)",
        "https://acrb.example.org/a b",
        "acrb.example.org",
        "ftp://acrb.example.org",
        "https://",
        "https://acrb.example.org/?next=x",
        "https://user:pw@acrb.example.org",
        "https://acrb.example.org:port",
    ],
)
def test_create_invites_takes_only_an_http_address(open_batch, base_url):
    """One line naming --base-url, and no link made (issue 36 §2: `javascript:alert(1)` and a URL
    with a space were printed as invite links)."""
    from django.core.management import CommandError, call_command

    argv = ["--study", open_batch.study.slug, "--batch", "recruits", "--base-url", base_url]
    with pytest.raises(
        CommandError, match=r"^Error: argument --base-url: .*(http|space|URL|login)"
    ):
        call_command("create_invites", *argv, stdout=StringIO())
    assert not InviteLink.objects.exists()


def test_create_invites_prints_links_under_the_address_given(open_batch):
    from django.core.management import call_command

    out = StringIO()
    argv = ["--study", open_batch.study.slug, "--batch", "recruits"]
    call_command("create_invites", *argv, "--base-url", "http://127.0.0.1:8000/", stdout=out)
    assert out.getvalue().startswith("http://127.0.0.1:8000/join/")


def test_the_two_forms_of_the_people_page_have_distinct_field_ids(staff_client, open_batch):
    page = staff_client.get(reverse("staff:people")).content.decode()
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert 'id="id_invite_group"' in page
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


def test_each_invite_shows_pending_accepted_expired_or_revoked(staff_client, open_batch):
    from datetime import timedelta

    from django.utils import timezone

    made = invites.invite_links_create(batch=open_batch, group="", count=4)
    notes = ["pending one", "accepted one", "expired one", "revoked one"]
    for (link, _), note in zip(made, notes, strict=True):
        InviteLink.objects.filter(pk=link.pk).update(note=note)
    invites.invite_redeem(token=made[1][1], consent_id=open_batch.study.consent_versions.get().pk)
    InviteLink.objects.filter(pk=made[2][0].pk).update(expires_at=timezone.now() - timedelta(1))
    invites.invite_revoke(link=made[3][0])
    page = staff_client.get(reverse("staff:people")).content.decode()
    rows = re.findall(r"<tr><td>([^<]+)</td>.*?class=\"invite-(\w+)\"", page, flags=re.S)
    assert dict(rows) == {
        "pending one": "pending",
        "accepted one": "accepted",
        "expired one": "expired",
        "revoked one": "revoked",
    }


def test_the_people_page_reads_invites_in_a_fixed_number_of_queries(
    staff_client, open_batch, django_assert_num_queries
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    invites.invite_links_create(batch=open_batch, group="", count=1)
    with CaptureQueriesContext(connection) as one:
        staff_client.get(reverse("staff:people"))
    invites.invite_links_create(batch=open_batch, group="", count=5)
    invites.invite_redeem(
        token=invites.invite_links_create(batch=open_batch, group="")[0][1],
        consent_id=open_batch.study.consent_versions.get().pk,
    )
    with django_assert_num_queries(len(one)):
        staff_client.get(reverse("staff:people"))

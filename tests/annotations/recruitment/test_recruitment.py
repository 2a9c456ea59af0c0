"""Recruitment through the Django test client and the services: invite links, panel links,
consent before any item, completion, staff pages. Every refusal changes nothing."""

import re
from datetime import timedelta

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotations import services
from annotations.models import Annotation, Annotator, Assignment, Batch
from annotations.recruitment import enrolment, invites, panels
from annotations.recruitment.consent import consent_current, consent_publish
from annotations.recruitment.models import (
    ConsentRecord,
    InviteLink,
    PanelParticipant,
)
from annotations.recruitment.rules import PanelEntry, PanelParams, RecruitmentError
from tests.support.django_fixtures import client_for

pytestmark = pytest.mark.django_db

PID = "5f1a2b3c4d5e6f7a8b9c0d1e"


@pytest.fixture
def consent(imported_study):
    return consent_publish(
        study=imported_study,
        consent_text="You will label images.\n\nYou may stop at any time.",
        instructions="Label what you see.",
    )


@pytest.fixture
def open_batch(imported_study, consent):
    return enrolment.recruitment_batch_create(
        study=imported_study,
        name="recruits",
        policy=Batch.Policy.EXPERTISE,
        overlap_k=1,
        items_per_annotator=3,
        seed=5,
    )


def _invite(batch, group="Nigerian", **kwargs):
    [(link, token)] = invites.invite_links_create(batch=batch, group=group, **kwargs)
    return link, token


def _agree(client, url, consent, **fields):
    return client.post(url, {"agree": "yes", "consent_id": consent.pk, **fields})


# --- consent ---------------------------------------------------------------------------


def test_consent_versions_are_added_never_edited(imported_study, consent):
    second = consent_publish(study=imported_study, consent_text="v2 text")
    consent.refresh_from_db()
    assert (consent.version, second.version) == (1, 2)
    assert consent.consent_text.startswith("You will label")
    assert consent_current(study_id=imported_study.pk) == second
    with pytest.raises(RecruitmentError, match="empty"):
        consent_publish(study=imported_study, consent_text="   ")


def test_staff_made_annotator_sees_no_item_before_consent(batch, annotators):
    consent = consent_publish(study=batch.study, consent_text="Please agree.")
    c = client_for(annotators[0])
    first = Assignment.objects.filter(batch=batch, annotator=annotators[0]).order_by("position")[0]
    consent_url = reverse("recruitment:consent", args=[batch.pk])
    assert c.get(reverse("annotations:batch_next", args=[batch.pk]))["Location"] == consent_url
    assert c.get(reverse("annotations:assignment", args=[first.pk]))["Location"] == consent_url
    answer = c.post(reverse("annotations:answer", args=[first.pk]), {"answer": "erased"})
    assert answer["Location"] == consent_url and Annotation.objects.count() == 0
    page = c.get(consent_url)
    assert b"Please agree." in page.content and b"version 1" in page.content
    assert c.post(consent_url, {"consent_id": consent.pk}).status_code == 400  # box not ticked
    assert not ConsentRecord.objects.exists()
    done = _agree(c, consent_url, consent)
    assert done["Location"] == reverse("annotations:batch_next", args=[batch.pk])
    record = ConsentRecord.objects.get(annotator=annotators[0])
    assert (record.version, record.consent_id, len(record.text_sha256)) == (1, consent.pk, 64)
    assert c.get(reverse("annotations:assignment", args=[first.pk])).status_code == 200


def test_study_without_consent_text_serves_items_directly(batch, annotators):
    c = client_for(annotators[0])
    response = c.get(reverse("annotations:batch_next", args=[batch.pk]))
    assert "/assignments/" in response["Location"]


# --- invite links ----------------------------------------------------------------------


def test_invite_needs_a_consent_text_and_a_policy_that_takes_newcomers(batch, annotators):
    with pytest.raises(RecruitmentError, match="no consent text"):
        invites.invite_links_create(batch=batch, group="US")
    consent_publish(study=batch.study, consent_text="ok")
    manual = services.batch_create(
        request=services.batch_request_build(
            study=batch.study,
            name="manual",
            policy="manual",
            annotators=annotators[:1],
            manual_pairs=[],
        )
    )
    with pytest.raises(RecruitmentError, match="manual policy"):
        invites.invite_links_create(batch=manual, group="US")
    assert not InviteLink.objects.exists()


def test_invite_link_creates_a_logged_in_annotator_who_starts_the_batch(open_batch, consent):
    link, token = _invite(open_batch)
    assert token not in link.token_sha256
    url = reverse("recruitment:invite", args=[token])
    client = Client()
    page = client.get(url)
    assert page.status_code == 200 and b"You may stop at any time." in page.content
    assert b"Label what you see." in page.content
    link.refresh_from_db()
    assert link.used_at is None  # opening (or a link preview) uses nothing

    response = _agree(client, url, consent)
    annotator = Annotator.objects.get(invite_link=link)
    assert response["Location"] == reverse("annotations:batch_next", args=[open_batch.pk])
    assert annotator.group == "Nigerian" and not annotator.user.has_usable_password()
    mine = Assignment.objects.filter(annotator=annotator, batch=open_batch)
    assert mine.count() == 3
    # Expertise: both Nigerian items of the study are among the three (queue order is shuffled).
    values = [a.item.attribute_value.value for a in mine]
    assert values.count("Nigerian") == 2
    assert ConsentRecord.objects.get(annotator=annotator).version == 1
    first = client.get(response["Location"])
    assert first.status_code == 302 and "/assignments/" in first["Location"]


def test_used_expired_revoked_and_unknown_links_say_so_and_change_nothing(open_batch, consent):
    used, used_token = _invite(open_batch)
    _agree(Client(), reverse("recruitment:invite", args=[used_token]), consent)
    expired, expired_token = _invite(open_batch)
    InviteLink.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(hours=1))
    revoked, revoked_token = _invite(open_batch)
    assert invites.invite_revoke(link=revoked) and not invites.invite_revoke(link=revoked)
    before = (Annotator.objects.count(), Assignment.objects.count())
    for token, status, words in [
        (used_token, 410, b"already used"),
        (expired_token, 410, b"expired on"),
        (revoked_token, 410, b"revoked"),
        ("not-a-token", 404, b"not valid"),
    ]:
        url = reverse("recruitment:invite", args=[token])
        for response in (Client().get(url), _agree(Client(), url, consent)):
            assert response.status_code in (status, 409), token
            assert words in response.content
    assert (Annotator.objects.count(), Assignment.objects.count()) == before
    assert not invites.invite_revoke(link=used)  # a used link cannot be revoked afterwards


def test_invite_post_without_agreement_or_with_a_foreign_consent_changes_nothing(
    open_batch, consent, study
):
    link, token = _invite(open_batch)
    url = reverse("recruitment:invite", args=[token])
    assert Client().post(url, {"consent_id": consent.pk}).status_code == 400
    other = services.study_create(name="other", slug="other")
    foreign = consent_publish(study=other, consent_text="other study")
    response = Client().post(url, {"agree": "yes", "consent_id": foreign.pk})
    assert response.status_code == 409 and b"reload the page" in response.content
    link.refresh_from_db()
    assert link.used_at is None and Annotator.objects.count() == 0


def test_a_fully_covered_batch_still_gives_a_newcomer_items(imported_study, consent):
    batch = enrolment.recruitment_batch_create(
        study=imported_study, name="k1", policy="k_overlap", overlap_k=1, items_per_annotator=None
    )
    for _ in range(2):  # the first recruit covers every item once; the second labels them again
        _agree(Client(), reverse("recruitment:invite", args=[_invite(batch, group="")[1]]), consent)
    per_annotator = Assignment.objects.filter(batch=batch).values_list("annotator", flat=True)
    assert sorted(list(per_annotator).count(a) for a in set(per_annotator)) == [6, 6]


def test_a_group_with_nothing_left_is_refused_and_its_link_stays_usable(imported_study, consent):
    batch = enrolment.recruitment_batch_create(
        study=imported_study, name="e", policy="expertise", overlap_k=1, items_per_annotator=2
    )
    for group in ("Korean", "Nigerian", "US"):  # every item of the study is reserved for a group
        _invite(batch, group=group)
    lonely, token = _invite(batch, group="Martian")
    response = _agree(Client(), reverse("recruitment:invite", args=[token]), consent)
    assert response.status_code == 409
    assert b"no items left for group &#x27;Martian&#x27;" in response.content
    lonely.refresh_from_db()
    assert lonely.used_at is None and not Annotator.objects.exists()
    assert not Assignment.objects.exists()


def test_recruits_share_a_k_overlap_batch_evenly(imported_study, consent):
    batch = enrolment.recruitment_batch_create(
        study=imported_study, name="k", policy="k_overlap", overlap_k=2, items_per_annotator=3
    )
    for _ in range(4):  # 4 recruits x 3 items = 12 labels = 6 items x k=2
        _agree(Client(), reverse("recruitment:invite", args=[_invite(batch, group="")[1]]), consent)
    per_item = Assignment.objects.filter(batch=batch).values_list("item_id", flat=True)
    counts = {item: list(per_item).count(item) for item in set(per_item)}
    assert len(counts) == 6 and set(counts.values()) == {2}


# --- panel links -----------------------------------------------------------------------


@pytest.fixture
def panel(open_batch):
    return panels.panel_link_create(
        batch=open_batch,
        name="Prolific wave 1",
        group="Nigerian",
        params=PanelParams(expected_study_id="STUDY1"),
        completion_url="https://app.prolific.com/submissions/complete?cc=C1A2B3",
    )


def _panel_url(link, pid=PID, study="STUDY1", session="sess-1"):
    base = reverse("recruitment:panel_entry", args=[link.slug])
    return f"{base}?PROLIFIC_PID={pid}&STUDY_ID={study}&SESSION_ID={session}"


def _enrol(client, link, consent, pid=PID, session="sess-1"):
    client.get(_panel_url(link, pid=pid, session=session))
    return _agree(
        client,
        reverse("recruitment:panel_entry", args=[link.slug]),
        consent,
        PROLIFIC_PID=pid,
        STUDY_ID="STUDY1",
        SESSION_ID=session,
    )


def test_panel_link_creation_checks_its_settings(open_batch):
    with pytest.raises(RecruitmentError, match="completion URL or a completion code"):
        panels.panel_link_create(batch=open_batch, name="x")
    with pytest.raises(RecruitmentError, match="not an http"):
        panels.panel_link_create(batch=open_batch, name="x", completion_url="javascript:alert(1)")
    with pytest.raises(RecruitmentError, match="distinct"):
        panels.panel_link_create(
            batch=open_batch,
            name="x",
            completion_code="C",
            params=PanelParams(participant="a", study="a", session="b"),
        )


def test_panel_participant_consents_enrols_and_their_ids_are_stored(panel, consent):
    client = Client()
    page = client.get(_panel_url(panel))
    assert page.status_code == 200 and b"version 1" in page.content
    assert not PanelParticipant.objects.exists()  # nothing before consent
    response = _enrol(client, panel, consent)
    assert response["Location"] == reverse("annotations:batch_next", args=[panel.batch_id])
    participant = PanelParticipant.objects.get()
    assert (
        participant.participant_id,
        participant.panel_study_id,
        participant.panel_session_id,
    ) == (
        PID,
        "STUDY1",
        "sess-1",
    )
    assert participant.annotator.group == "Nigerian"
    assert Assignment.objects.filter(annotator=participant.annotator).count() == 3
    cookie = response.cookies[f"acrb_panel_{panel.pk}"]
    assert cookie["httponly"] and cookie["samesite"] == "Lax"
    assert participant.browser_key_sha256 and cookie.value not in participant.browser_key_sha256


def test_returning_participant_resumes_their_own_queue(panel, consent):
    client = Client()
    _enrol(client, panel, consent)
    participant = PanelParticipant.objects.get()
    again = client.get(_panel_url(panel, session="sess-2"))
    assert again["Location"] == reverse("annotations:batch_next", args=[panel.batch_id])
    # A new browser session (logged out) with the cookie still set also resumes.
    del client.cookies[settings.SESSION_COOKIE_NAME]
    assert client.get(_panel_url(panel))["Location"].endswith(f"/batches/{panel.batch_id}/next/")
    assert client.session["_auth_user_id"] == str(participant.annotator.user_id)
    assert PanelParticipant.objects.count() == 1 and Annotator.objects.count() == 1


def test_someone_else_with_the_same_participant_id_is_refused(panel, consent):
    _enrol(Client(), panel, consent)
    stranger = Client()
    response = stranger.get(_panel_url(panel))
    # The link's holder cannot tell an enrolled id from a new one: the same consent page.
    assert response.status_code == 200 and b"another browser" not in response.content
    assert "_auth_user_id" not in stranger.session
    posted = _agree(
        stranger,
        reverse("recruitment:panel_entry", args=[panel.slug]),
        consent,
        PROLIFIC_PID=PID,
        STUDY_ID="STUDY1",
    )
    assert posted.status_code == 403 and "_auth_user_id" not in stranger.session
    assert PanelParticipant.objects.count() == 1 and Annotator.objects.count() == 1

    assert b"another browser" in posted.content
    panels.panel_participant_release(participant=PanelParticipant.objects.get())
    assert stranger.get(_panel_url(panel)).status_code == 302  # released: this browser binds
    assert (
        _agree(  # ...and then only this one
            Client(),
            reverse("recruitment:panel_entry", args=[panel.slug]),
            consent,
            PROLIFIC_PID=PID,
            STUDY_ID="STUDY1",
        ).status_code
        == 403
    )


def test_same_participant_cannot_enrol_twice_through_another_link(panel, consent, open_batch):
    other = panels.panel_link_create(batch=open_batch, name="wave 2", completion_code="C2")
    _enrol(Client(), panel, consent)
    assert Client().get(_panel_url(other)).status_code == 200  # the consent page, as for anyone
    response = _enrol(Client(), other, consent)
    assert response.status_code == 403 and b"through another link" in response.content
    with pytest.raises(RecruitmentError, match="already enrolled"):
        panels.panel_enrol(
            link=other,
            entry=PanelEntry(PID, "", ""),
            consent_id=consent.pk,
        )
    assert PanelParticipant.objects.count() == 1


def test_panel_refusals_are_one_line_and_change_nothing(panel, consent):
    base = reverse("recruitment:panel_entry", args=[panel.slug])
    missing = Client().get(base)
    assert missing.status_code == 400 and b"PROLIFIC_PID parameter is missing" in missing.content
    wrong_study = Client().get(_panel_url(panel, study="OTHER"))
    assert wrong_study.status_code == 400 and b"another panel study" in wrong_study.content
    panels.panel_link_close(link=panel)
    closed = Client().get(_panel_url(panel))
    assert closed.status_code == 410 and b"closed" in closed.content
    assert not PanelParticipant.objects.exists() and not Annotator.objects.exists()


def test_closed_link_still_lets_enrolled_participants_finish(panel, consent):
    client = Client()
    _enrol(client, panel, consent)
    panels.panel_link_close(link=panel)
    assert client.get(_panel_url(panel)).status_code == 302


def _answer_everything(client, batch_id):
    while True:
        response = client.get(reverse("annotations:batch_next", args=[batch_id]))
        if "/assignments/" not in response.get("Location", ""):
            return response
        pk = int(response["Location"].rstrip("/").split("/")[-1])
        client.post(reverse("annotations:answer", args=[pk]), {"answer": "retained"})


def test_end_of_batch_redirects_to_the_completion_url(panel, consent):
    client = Client()
    _enrol(client, panel, consent)
    complete_url = reverse("recruitment:panel_complete", args=[panel.batch_id])
    assert client.get(complete_url)["Location"].endswith("/next/")  # not finished yet
    end = _answer_everything(client, panel.batch_id)
    assert end["Location"] == complete_url
    final = client.get(complete_url)
    assert final["Location"] == "https://app.prolific.com/submissions/complete?cc=C1A2B3"
    participant = PanelParticipant.objects.get()
    assert participant.completed_at is not None
    first_time = participant.completed_at
    client.get(complete_url)
    participant.refresh_from_db()
    assert participant.completed_at == first_time


def test_end_of_batch_shows_the_code_when_there_is_no_url(open_batch, consent):
    link = panels.panel_link_create(batch=open_batch, name="code only", completion_code="XK7-42")
    client = Client()
    _enrol(client, link, consent)
    end = _answer_everything(client, open_batch.pk)
    page = client.get(end["Location"])
    assert page.status_code == 200 and b"XK7-42" in page.content


def test_password_annotators_keep_the_ordinary_end_page(batch, annotators):
    c = client_for(annotators[0])
    end = _answer_everything(c, batch.pk)
    assert end.status_code == 200 and b"are answered" in end.content


# --- staff pages -----------------------------------------------------------------------


def test_recruitment_pages_are_staff_only(imported_study, annotators):
    url = reverse("recruitment:staff_page", args=[imported_study.slug])
    assert client_for(annotators[0]).get(url).status_code == 403
    assert Client().get(url).status_code == 302


def test_staff_publish_consent_make_batch_invites_and_panel_link(staff_client, imported_study):
    slug = imported_study.slug
    page = staff_client.get(reverse("recruitment:staff_page", args=[slug]))
    assert page.status_code == 200 and b"No consent text yet" in page.content
    staff_client.post(
        reverse("recruitment:staff_consent_publish", args=[slug]),
        {"consent_text": "Agree?", "instructions": "Be careful."},
    )
    staff_client.post(
        reverse("recruitment:staff_batch_create", args=[slug]),
        {"name": "open", "policy": "k_overlap", "overlap_k": 2, "gold_per_annotator": 0},
    )
    batch = Batch.objects.get(name="open")
    made = staff_client.post(
        reverse("recruitment:staff_invites_create", args=[slug]),
        {"batch": batch.pk, "group": "US", "count": 3, "days": 7},
    )
    assert made.status_code == 200 and made.content.count(b"/join/") == 3
    assert InviteLink.objects.filter(batch=batch, group="US").count() == 3
    bad = staff_client.post(
        reverse("recruitment:staff_panel_link_create", args=[slug]),
        {
            "batch": batch.pk,
            "name": "p",
            "participant_param": "PROLIFIC_PID",
            "study_param": "STUDY_ID",
            "session_param": "SESSION_ID",
            "completion_url": "ftp://example.org/x",
        },
    )
    assert bad.status_code == 400 and b"is not an http(s) URL" in bad.content
    staff_client.post(
        reverse("recruitment:staff_panel_link_create", args=[slug]),
        {
            "batch": batch.pk,
            "name": "wave",
            "participant_param": "PROLIFIC_PID",
            "study_param": "STUDY_ID",
            "session_param": "SESSION_ID",
            "completion_code": "DONE1",
        },
    )
    page = staff_client.get(reverse("recruitment:staff_page", args=[slug]))
    assert b"PROLIFIC_PID={{%PROLIFIC_PID%}}" in page.content
    link = InviteLink.objects.first()
    staff_client.post(reverse("recruitment:staff_invite_revoke", args=[link.pk]))
    link.refresh_from_db()
    assert link.revoked_at is not None


def test_admin_lists_recruitment_tables_read_only(admin_client, panel, consent):
    _enrol(Client(), panel, consent)
    for model in ("studyconsent", "consentrecord", "invitelink", "panellink", "panelparticipant"):
        page = admin_client.get(reverse(f"admin:annotations_{model}_changelist"))
        assert page.status_code == 200, model
    participant = PanelParticipant.objects.get()
    detail = admin_client.get(
        reverse("admin:annotations_panelparticipant_change", args=[participant.pk])
    )
    assert (
        detail.status_code == 200 and participant.browser_key_sha256.encode() not in detail.content
    )
    assert admin_client.get(reverse("admin:annotations_studyconsent_add")).status_code == 403


def test_an_ordinary_batch_takes_recruits_from_its_own_items(batch, imported_study):
    consent = consent_publish(study=imported_study, consent_text="ok")
    _, token = _invite(batch, group="")
    _agree(Client(), reverse("recruitment:invite", args=[token]), consent)
    recruit = Annotator.objects.get(invite_link__isnull=False)
    batch_items = set(
        Assignment.objects.filter(batch=batch)
        .exclude(annotator=recruit)
        .values_list("item", flat=True)
    )
    mine = set(Assignment.objects.filter(annotator=recruit).values_list("item", flat=True))
    assert mine == batch_items  # no quota on an ordinary batch: every item of the batch


def test_create_invites_command_prints_links_and_errors_in_one_line(open_batch):
    from io import StringIO

    from django.core.management import CommandError, call_command

    out = StringIO()
    call_command(
        "create_invites",
        "--study",
        open_batch.study.slug,
        "--batch",
        open_batch.name,
        "--group",
        "US",
        "--count",
        "2",
        "--base-url",
        "https://acrb.example.org/",
        stdout=out,
    )
    lines = out.getvalue().split()
    assert len(lines) == 2 and all(u.startswith("https://acrb.example.org/join/") for u in lines)
    assert InviteLink.objects.filter(group="US").count() == 2
    for argv, message in [
        (["--batch", "nope"], "unknown batch 'nope'"),
        (["--batch", str(open_batch.pk), "--count", "0"], "--count: 0 is out of range: use 1 to"),
        (["--batch", str(open_batch.pk), "--days", "0"], "--days: 0 is out of range: use more"),
    ]:
        with pytest.raises(CommandError, match=message):
            call_command(
                "create_invites", "--study", open_batch.study.slug, "--base-url", "http://x", *argv
            )
    assert InviteLink.objects.count() == 2


# --- issue 36 §1: names that cannot collide, ids that cannot be probed ---------------------


def test_an_invite_whose_account_name_is_taken_still_works(open_batch, consent, django_user_model):
    link, token = _invite(open_batch)
    squatter = django_user_model.objects.create_user(username=f"invite-{link.pk}", is_staff=True)
    url = reverse("recruitment:invite", args=[token])
    response = _agree(Client(), url, consent)
    assert response.status_code == 302, response.content[:300]
    annotator = Annotator.objects.get(invite_link=link)
    assert annotator.user.username.startswith(f"invite-{link.pk}-")
    assert annotator.user != squatter and not Annotator.objects.filter(user=squatter).exists()


def test_a_panel_participant_whose_account_name_is_taken_is_enrolled(
    panel, consent, django_user_model
):
    django_user_model.objects.create_user(username=f"panel-{panel.pk}-{PID}")
    response = _enrol(Client(), panel, consent)
    assert response.status_code == 302 and b"already enrolled" not in response.content
    participant = PanelParticipant.objects.get()
    assert participant.annotator.user.username.startswith(f"panel-{panel.pk}-{PID}-")


def _page_text(response, pid):
    """The page as the visitor sees it, with their own id and the per-response tokens (CSRF,
    CSP nonce) taken out."""
    text = response.content.decode().replace(pid, "PID")
    return re.sub(r'("inlineStyleNonce": |"X-CSRFToken": |value=)"[^"]*"', r'\1""', text)


@pytest.mark.parametrize("closed", [False, True])
def test_a_panel_link_answers_an_enrolled_and_a_new_id_the_same_way(panel, consent, closed):
    _enrol(Client(), panel, consent)
    if closed:
        panels.panel_link_close(link=panel)
    enrolled = Client().get(_panel_url(panel))
    new = Client().get(_panel_url(panel, pid="someone-new"))
    assert enrolled.status_code == new.status_code == (410 if closed else 200)
    assert _page_text(enrolled, PID) == _page_text(new, "someone-new")


def test_the_page_with_fresh_invite_links_is_never_cached(staff_client, open_batch):
    made = staff_client.post(
        reverse("recruitment:staff_invites_create", args=[open_batch.study.slug]),
        {"batch": open_batch.pk, "group": "US", "count": 2, "days": 7},
    )
    assert made.status_code == 200 and made.content.count(b"/join/") == 2
    assert "no-store" in made["Cache-Control"]


def test_the_batch_form_carries_a_one_time_key_and_a_resubmit_makes_no_second_batch(
    staff_client, imported_study, consent
):
    page = staff_client.get(reverse("recruitment:staff_page", args=[imported_study.slug]))
    key = re.search(rb'name="request_key" value="([^"]+)" id="id_request_key"', page.content)
    url = reverse("recruitment:staff_batch_create", args=[imported_study.slug])
    data = {"name": "open", "policy": "k_overlap", "overlap_k": 2, "gold_per_annotator": 0}
    for _ in range(2):
        sent = staff_client.post(url, {**data, "request_key": key.group(1).decode()})
        assert sent.status_code == 302
    assert Batch.objects.filter(name="open").count() == 1
    other_tab = staff_client.post(url, {**data, "request_key": "another-form"})
    assert other_tab.status_code == 400 and b"already has a batch named" in other_tab.content
    assert Batch.objects.filter(name="open").count() == 1

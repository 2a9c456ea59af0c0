"""Recruitment under simultaneous requests: the database, not a Python check, decides.

Meant for PostgreSQL (DATABASE_URL=postgres://..., as .ci/run's second pass), where requests
really run at once; they pass on SQLite too, which writes one at a time."""

from collections import Counter

import pytest
from django.test import Client
from django.urls import reverse

from annotations.models import Annotator, Assignment, Batch
from annotations.recruitment import enrolment, invites, panels
from annotations.recruitment.consent import consent_publish
from annotations.recruitment.models import InviteLink, PanelParticipant, StudyConsent
from annotations.recruitment.rules import PanelEntry, RecruitmentError, new_secret
from tests.annotations.survey.test_concurrency import run_together

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def consent(imported_study):
    return consent_publish(study=imported_study, consent_text="Agree to take part.")


def _batch(study, **kwargs):
    options = {"policy": "k_overlap", "overlap_k": 2, "items_per_annotator": 3, "seed": 4}
    return enrolment.recruitment_batch_create(study=study, name="open", **{**options, **kwargs})


def test_one_invite_opened_four_times_at_once_makes_one_annotator(imported_study, consent):
    [(link, token)] = invites.invite_links_create(batch=_batch(imported_study), group="US")
    results = run_together(
        [lambda: invites.invite_redeem(token=token, consent_id=consent.pk) for _ in range(4)]
    )
    winners = [r for r in results if not isinstance(r, Exception)]
    refusals = [r for r in results if isinstance(r, RecruitmentError)]
    assert len(winners) == 1 and len(refusals) == 3, results
    assert all("already used" in str(r) for r in refusals)
    assert Annotator.objects.count() == 1
    assert InviteLink.objects.get(pk=link.pk).annotator == winners[0][0]


def test_one_participant_id_enrolling_four_times_at_once_enrols_once(imported_study, consent):
    link = panels.panel_link_create(batch=_batch(imported_study), name="p", completion_code="C")
    entry = PanelEntry("pid-1", "", "")
    results = run_together(
        [
            lambda: panels.panel_enrol(link=link, entry=entry, consent_id=consent.pk)
            for _ in range(4)
        ]
    )
    assert sum(not isinstance(r, Exception) for r in results) == 1, results
    assert all("already enrolled" in str(r) for r in results if isinstance(r, Exception)), results
    assert PanelParticipant.objects.count() == 1 and Annotator.objects.count() == 1


def test_recruits_arriving_together_still_cover_items_evenly(imported_study, consent):
    batch = _batch(imported_study)  # 6 items, k=2, 3 items each: 4 recruits fill it exactly
    links = invites.invite_links_create(batch=batch, group="", count=4)
    results = run_together(
        [
            (lambda token=token: invites.invite_redeem(token=token, consent_id=consent.pk))
            for _, token in links
        ]
    )
    assert not [r for r in results if isinstance(r, Exception)], results
    coverage = Counter(Assignment.objects.filter(batch=batch).values_list("item_id", flat=True))
    assert len(coverage) == 6 and set(coverage.values()) == {2}


# --- issue 36 §1: staff forms sent four times at once (a double click, a retrying proxy) ----


def _posted_together(staff_user, url, data, times=4):
    """``times`` identical POSTs from one staff member's browser, at the same moment."""
    clients = []
    for _ in range(times):
        client = Client()
        client.force_login(staff_user)
        clients.append(client)
    return run_together([lambda client=client: client.post(url, data) for client in clients])


def test_a_recruitment_batch_form_sent_four_times_at_once_makes_one_batch(
    staff_user, imported_study, consent
):
    data = {
        "name": "open",
        "policy": "k_overlap",
        "overlap_k": 2,
        "gold_per_annotator": 0,
        "request_key": new_secret(),  # the form's one-time key (RecruitmentBatchForm)
    }
    url = reverse("recruitment:staff_batch_create", args=[imported_study.slug])
    results = _posted_together(staff_user, url, data)
    assert [getattr(r, "status_code", r) for r in results] == [302] * 4, results
    assert Batch.objects.filter(study=imported_study, name="open").count() == 1


def test_a_batch_name_is_used_once_per_study_even_when_two_forms_race(
    staff_user, imported_study, consent
):
    url = reverse("recruitment:staff_batch_create", args=[imported_study.slug])
    keys = [new_secret() for _ in range(4)]  # four tabs, four keys, one name
    clients = []
    for _ in keys:
        client = Client()
        client.force_login(staff_user)
        clients.append(client)
    data = {"name": "open", "policy": "k_overlap", "overlap_k": 2, "gold_per_annotator": 0}
    results = run_together(
        [
            lambda client=client, key=key: client.post(url, {**data, "request_key": key})
            for client, key in zip(clients, keys, strict=True)
        ]
    )
    statuses = sorted(getattr(r, "status_code", r) for r in results)
    assert statuses == [302, 400, 400, 400], results
    refused = [r for r in results if r.status_code == 400]
    assert all(b"already has a batch named" in r.content for r in refused)
    assert Batch.objects.filter(study=imported_study, name="open").count() == 1


def test_a_consent_form_sent_four_times_at_once_publishes_one_version(staff_user, imported_study):
    url = reverse("recruitment:staff_consent_publish", args=[imported_study.slug])
    data = {"consent_text": "Agree to take part.", "instructions": "Label what you see."}
    results = _posted_together(staff_user, url, data)
    assert [getattr(r, "status_code", r) for r in results] == [302] * 4, results
    assert StudyConsent.objects.filter(study=imported_study).count() == 1

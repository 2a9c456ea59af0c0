"""Issue 36 §1: a new consent version is agreed to before the annotator's next answer, on
every path (survey with and without htmx, the answer service itself, invite and panel links),
and every answer records the version it was given under; the export carries it."""

import pytest
from django.conf import settings
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse

from annotations import selectors, services
from annotations.models import Annotation, AnnotationHistory, Annotator, Assignment, Batch
from annotations.recruitment import enrolment, invites, panels
from annotations.recruitment.consent import consent_publish
from annotations.recruitment.models import ConsentRecord, PanelParticipant, StudyConsent
from annotations.recruitment.rules import PanelEntry, RecruitmentError
from tests.support.django_fixtures import client_for

pytestmark = pytest.mark.django_db


def _open(batch, annotator):
    return list(
        Assignment.objects.filter(batch=batch, annotator=annotator, answered_at__isnull=True)
        .order_by("position")
        .values_list("pk", flat=True)
    )


def _agree(client, batch, consent):
    url = reverse("recruitment:consent", args=[batch.pk])
    return client.post(url, {"agree": "yes", "consent_id": consent.pk})


@pytest.fixture
def agreed(batch, annotators):
    """ann0 agreed to version 1 and answered one item, in a session that stays open."""
    v1 = consent_publish(study=batch.study, consent_text="Version one.")
    client = client_for(annotators[0])
    _agree(client, batch, v1)
    first = _open(batch, annotators[0])[0]
    assert client.post(reverse("annotations:answer", args=[first]), {"answer": "erased"})
    assert Annotation.objects.get(assignment_id=first).consent_version == 1
    return client, v1


def test_a_new_version_is_asked_before_the_next_answer_in_an_open_session(
    agreed, batch, annotators
):
    client, v1 = agreed
    v2 = consent_publish(study=batch.study, consent_text="Version two: we keep images longer.")
    second = _open(batch, annotators[0])[0]
    consent_url = reverse("recruitment:consent", args=[batch.pk])
    refused = client.post(reverse("annotations:answer", args=[second]), {"answer": "retained"})
    assert refused.status_code == 302 and refused["Location"] == consent_url
    assert not Annotation.objects.filter(assignment_id=second).exists()
    page = client.get(consent_url)
    assert b"Version two" in page.content and b"since you agreed to version 1" in page.content
    # Agreeing to the version the page showed before (a stale tab) records nothing.
    stale = client.post(consent_url, {"agree": "yes", "consent_id": v1.pk})
    assert stale.status_code == 400 and b"changed while this page was open" in stale.content
    assert not ConsentRecord.objects.filter(consent=v2).exists()
    assert _agree(client, batch, v2)["Location"].endswith(f"/batches/{batch.pk}/next/")
    client.post(reverse("annotations:answer", args=[second]), {"answer": "retained"})
    assert Annotation.objects.get(assignment_id=second).consent_version == 2
    versions = ConsentRecord.objects.filter(annotator=annotators[0]).values_list("version")
    assert sorted(v for (v,) in versions) == [1, 2]  # the first agreement is kept


def test_the_htmx_survey_is_sent_to_the_consent_page_too(agreed, batch, annotators):
    client, _ = agreed
    consent_publish(study=batch.study, consent_text="Version two.")
    second = _open(batch, annotators[0])[0]
    response = client.post(
        reverse("annotations:answer", args=[second]), {"answer": "retained"}, HTTP_HX_REQUEST="true"
    )
    assert response["HX-Redirect"] == reverse("recruitment:consent", args=[batch.pk])
    assert not Annotation.objects.filter(assignment_id=second).exists()


def test_a_fresh_login_is_asked_for_the_new_version_before_any_item(agreed, batch, annotators):
    consent_publish(study=batch.study, consent_text="Version two.")
    fresh = client_for(annotators[0])
    response = fresh.get(reverse("annotations:batch_next", args=[batch.pk]))
    assert response["Location"] == reverse("recruitment:consent", args=[batch.pk])


def test_the_answer_service_refuses_without_the_current_version_on_any_path(batch, annotators):
    consent_publish(study=batch.study, consent_text="Version one.")
    assignment = Assignment.objects.filter(batch=batch, annotator=annotators[1]).first()
    with pytest.raises(services.ConsentPending):
        services.annotation_submit(assignment=assignment, hard_refusal=True, cue_label=None)
    assert isinstance(services.ConsentPending("x"), ValidationError)
    assert not Annotation.objects.exists()


def test_an_edit_under_a_new_version_records_it_and_the_history_keeps_the_old(
    agreed, batch, annotators
):
    client, _ = agreed
    answered = Annotation.objects.get()
    v2 = consent_publish(study=batch.study, consent_text="Version two.")
    _agree(client, batch, v2)
    assignment = Assignment.objects.get(pk=answered.assignment_id)
    services.annotation_submit(assignment=assignment, hard_refusal=True, cue_label=None)
    answered.refresh_from_db()
    assert (answered.revision, answered.consent_version) == (2, 2)
    history = AnnotationHistory.objects.filter(annotation=answered).order_by("revision")
    assert [row.consent_version for row in history] == [1, 2]


def test_the_export_carries_the_consent_version(agreed, batch):
    rows = selectors.annotation_rows(study=batch.study)
    assert [row["consent_version"] for row in rows] == [1]


def test_a_study_without_consent_records_no_version(batch, annotators):
    assignment = Assignment.objects.filter(batch=batch, annotator=annotators[0]).first()
    made = services.annotation_submit(assignment=assignment, hard_refusal=True, cue_label=None)
    assert made.consent_version is None


def test_publishing_the_current_text_again_makes_no_version(imported_study):
    first = consent_publish(study=imported_study, consent_text="Same.", instructions="Look.")
    again = consent_publish(study=imported_study, consent_text=" Same.\n", instructions="Look.")
    assert again == first and StudyConsent.objects.count() == 1
    changed = consent_publish(study=imported_study, consent_text="Same.", instructions="Other.")
    assert changed.version == 2


# --- invite and panel links: the version agreed to is the study's current one ------------


@pytest.fixture
def open_batch(imported_study):
    consent_publish(study=imported_study, consent_text="Version one.")
    return enrolment.recruitment_batch_create(
        study=imported_study,
        name="recruits",
        policy=Batch.Policy.K_OVERLAP,
        overlap_k=2,
        items_per_annotator=3,
        seed=5,
    )


def test_an_invite_agreed_on_a_page_showing_an_old_version_is_refused(open_batch):
    v1 = StudyConsent.objects.get()
    [(link, token)] = invites.invite_links_create(batch=open_batch, group="")
    consent_publish(study=open_batch.study, consent_text="Version two.")
    url = reverse("recruitment:invite", args=[token])
    response = Client().post(url, {"agree": "yes", "consent_id": v1.pk})
    assert response.status_code == 409 and b"changed while this page was open" in response.content
    link.refresh_from_db()
    assert link.used_at is None and not Annotator.objects.exists()
    assert b"Version two." in Client().get(url).content


def test_a_panel_entry_agreed_on_an_old_version_is_refused(open_batch):
    v1 = StudyConsent.objects.get()
    link = panels.panel_link_create(batch=open_batch, name="wave", completion_code="C")
    consent_publish(study=open_batch.study, consent_text="Version two.")
    with pytest.raises(RecruitmentError, match="changed while this page was open"):
        panels.panel_enrol(link=link, entry=PanelEntry("pid-1", "", ""), consent_id=v1.pk)
    assert not PanelParticipant.objects.exists() and not Annotator.objects.exists()


def test_a_returning_panel_participant_agrees_to_the_new_version_first(open_batch):
    v1 = StudyConsent.objects.get()
    link = panels.panel_link_create(batch=open_batch, name="wave", completion_code="C")
    client = Client()
    entry = reverse("recruitment:panel_entry", args=[link.slug])
    client.post(entry, {"agree": "yes", "consent_id": v1.pk, "PROLIFIC_PID": "pid-1"})
    assert PanelParticipant.objects.count() == 1
    consent_publish(study=open_batch.study, consent_text="Version two.")
    del client.cookies[
        settings.SESSION_COOKIE_NAME
    ]  # back another day: the panel cookie lets them in
    resumed = client.get(f"{entry}?PROLIFIC_PID=pid-1", follow=True)
    assert resumed.redirect_chain[-1][0] == reverse("recruitment:consent", args=[open_batch.pk])
    assert b"Version two." in resumed.content

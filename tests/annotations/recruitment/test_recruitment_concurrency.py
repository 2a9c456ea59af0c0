"""Recruitment under simultaneous requests: the database, not a Python check, decides."""

from collections import Counter

import pytest

from annotations.models import Annotator, Assignment
from annotations.recruitment import enrolment, invites, panels
from annotations.recruitment.consent import consent_publish
from annotations.recruitment.models import InviteLink, PanelParticipant
from annotations.recruitment.rules import PanelEntry, RecruitmentError
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

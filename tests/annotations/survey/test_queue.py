"""The survey's queue selectors against plain ORM definitions, and the user+annotator backend."""

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from annotations import selectors, services
from annotations.common.auth import UserWithAnnotatorBackend
from annotations.models import Assignment
from tests.support.django_fixtures import client_for

pytestmark = pytest.mark.django_db


def _queue(batch, annotator):
    return list(
        Assignment.objects.filter(batch=batch, annotator=annotator, is_active=True).order_by(
            "position"
        )
    )


def _place_by_orm(assignment):
    own = Assignment.objects.filter(
        annotator_id=assignment.annotator_id, batch_id=assignment.batch_id, is_active=True
    )
    before = own.filter(position__lt=assignment.position).order_by("-position").first()
    after = own.filter(position__gt=assignment.position).order_by("position").first()
    return (
        before.pk if before else None,
        after.pk if after else None,
        own.exclude(answered_at=None).count(),
        own.count(),
    )


def test_queue_place_matches_the_orm_at_every_position(batch, annotators):
    annotator = annotators[0]
    queue = _queue(batch, annotator)
    # Answer two, and deactivate one (a reassignment): it must vanish from navigation and totals.
    for row in queue[1:3]:
        services.annotation_submit(assignment=row, hard_refusal=False, cue_label="retained")
    Assignment.objects.filter(pk=queue[3].pk).update(is_active=False)
    for row in _queue(batch, annotator):
        place = selectors.assignment_queue_place(assignment=row)
        got = (place.previous_id, place.next_id, place.progress.done, place.progress.total)
        assert got == _place_by_orm(row)
    first, last = _queue(batch, annotator)[0], _queue(batch, annotator)[-1]
    assert selectors.assignment_queue_place(assignment=first).previous_id is None
    assert selectors.assignment_queue_place(assignment=last).next_id is None
    assert queue[3].pk not in {
        selectors.assignment_queue_place(assignment=row).next_id for row in queue
    }


def test_queue_head_puts_skipped_rows_after_all_open_ones(batch, annotators):
    annotator = annotators[0]
    queue = _queue(batch, annotator)
    head = selectors.assignment_queue_head(annotator=annotator, batch_id=batch.pk)
    assert [row.pk for row in head] == [queue[0].pk, queue[1].pk]
    services.assignment_skip(assignment=queue[0])
    head = selectors.assignment_queue_head(annotator=annotator, batch_id=batch.pk, size=3)
    assert [row.pk for row in head] == [queue[1].pk, queue[2].pk, queue[3].pk]
    for row in queue[1:-1]:
        services.annotation_submit(assignment=row, hard_refusal=True, cue_label=None)
    head = selectors.assignment_queue_head(annotator=annotator, batch_id=batch.pk)
    assert [row.pk for row in head] == [queue[-1].pk, queue[0].pk]  # the skipped one comes last
    services.annotation_submit(assignment=queue[-1], hard_refusal=True, cue_label=None)
    services.annotation_submit(assignment=queue[0], hard_refusal=True, cue_label=None)
    assert selectors.assignment_queue_head(annotator=annotator, batch_id=batch.pk) == []
    assert selectors.assignment_next(annotator=annotator, batch_id=batch.pk) is None


def test_queue_head_is_the_annotators_own_and_active_only(batch, annotators):
    mine = _queue(batch, annotators[0])
    Assignment.objects.filter(pk=mine[0].pk).update(is_active=False)
    head = selectors.assignment_queue_head(annotator=annotators[0], batch_id=batch.pk, size=50)
    assert {row.annotator_id for row in head} == {annotators[0].pk}
    assert mine[0].pk not in {row.pk for row in head}


def test_survey_page_shows_the_queue_place(batch, annotators):
    queue = _queue(batch, annotators[0])
    services.annotation_submit(assignment=queue[0], hard_refusal=False, cue_label="erased")
    page = client_for(annotators[0]).get(reverse("annotations:assignment", args=[queue[1].pk]))
    assert page.context["previous_id"] == queue[0].pk
    assert page.context["next_id"] == queue[2].pk
    assert (page.context["progress"].done, page.context["progress"].total) == (1, len(queue))


def test_backend_loads_the_annotator_with_the_user(annotators, django_assert_num_queries):
    backend = UserWithAnnotatorBackend()
    with django_assert_num_queries(1):
        user = backend.get_user(annotators[0].user_id)
        assert selectors.annotator_for_user(user) == annotators[0]
    annotators[1].is_active = False
    annotators[1].save()
    assert selectors.annotator_for_user(backend.get_user(annotators[1].user_id)) is None
    plain = get_user_model().objects.create_user(username="no-profile", password="x" * 12)
    with django_assert_num_queries(1):
        assert selectors.annotator_for_user(backend.get_user(plain.pk)) is None
    plain.is_active = False
    plain.save()
    assert backend.get_user(plain.pk) is None
    assert backend.get_user(10**9) is None


def test_logout_ends_the_session_for_a_copied_cookie_too(batch, annotators):
    """Sessions are read from the cache: a logout must end them there, not only in the DB."""
    c = client_for(annotators[0])
    url = reverse("annotations:home")
    assert c.get(url).status_code == 200
    copy = Client()
    copy.cookies[settings.SESSION_COOKIE_NAME] = c.cookies[settings.SESSION_COOKIE_NAME].value
    assert copy.get(url).status_code == 200
    c.post(reverse("logout"))
    assert copy.get(url).status_code == 302

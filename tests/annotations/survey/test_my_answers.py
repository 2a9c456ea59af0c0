"""The annotator's "my answers" page: only their own answers, paginated, in fixed queries."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotations import selectors, services
from annotations.models import Assignment, Study
from tests.support.django_fixtures import client_for

pytestmark = pytest.mark.django_db


def _answer(annotator, batch, n, label="erased"):
    rows = Assignment.objects.filter(batch=batch, annotator=annotator).order_by("position")[:n]
    for assignment in rows:
        services.annotation_submit(assignment=assignment, hard_refusal=False, cue_label=label)
    return list(rows)


def test_page_lists_only_own_answers_with_revision_count(batch, annotators):
    mine = _answer(annotators[0], batch, 3)
    theirs = _answer(annotators[1], batch, 5, label="retained")
    services.annotation_submit(assignment=mine[1], hard_refusal=False, cue_label="substituted")
    # A second version of one answer: the page shows two versions and the latest label.
    services.annotation_submit(assignment=mine[0], hard_refusal=True, cue_label=None)
    page = selectors.annotator_answer_page(annotator=annotators[0], study=batch.study)
    assert page.paginator.count == 3
    assert {a.assignment_id for a in page} == {a.pk for a in mine}
    assert not {a.assignment_id for a in page} & {a.pk for a in theirs}
    first = next(a for a in page if a.assignment_id == mine[0].pk)
    assert (first.revision, first.hard_refusal) == (2, True)
    assert page[0].assignment_id == mine[0].pk  # most recently changed first

    response = client_for(annotators[0]).get(
        reverse("annotations:my_answers", args=[batch.study.slug])
    )
    assert response.status_code == 200
    body = response.content.decode()
    for assignment in mine:
        assert reverse("annotations:item_image", args=[assignment.item_id]) in body
        assert reverse("annotations:assignment", args=[assignment.pk]) in body
    for assignment in theirs:
        assert reverse("annotations:assignment", args=[assignment.pk]) not in body
    assert "Refusal" in body and "Cue erased" in body and "Cue substituted" in body


def test_pages_and_query_count_do_not_grow(batch, annotators):
    _answer(annotators[0], batch, 6)
    a = annotators[0]
    study = batch.study  # loaded before counting: the selector's own queries are counted
    with CaptureQueriesContext(connection) as few:
        page = selectors.annotator_answer_page(annotator=a, study=study, per_page=2)
        [(x.assignment.item.item_id, x.assignment.batch.name, x.revision) for x in page]
    with CaptureQueriesContext(connection) as many:
        page = selectors.annotator_answer_page(annotator=a, study=study, per_page=6)
        [(x.assignment.item.item_id, x.assignment.batch.name, x.revision) for x in page]
    assert len(few) == len(many) == 2  # the count and the page, no query per row

    c = client_for(a)
    url = reverse("annotations:my_answers", args=[batch.study.slug])
    with CaptureQueriesContext(connection) as view:
        response = c.get(url)
    # user (session from cache), study check, the count, the page
    assert len(view) == 4, [q["sql"] for q in view.captured_queries]
    assert response.context["page"].paginator.num_pages == 1
    second = selectors.annotator_answer_page(
        annotator=a, study=batch.study, page_number="2", per_page=4
    )
    assert (second.number, len(second)) == (2, 2)
    # A page number that is not a page gives the last page or the first, never an error.
    assert c.get(url + "?page=999").status_code == 200
    assert c.get(url + "?page=abc").status_code == 200


def test_foreign_study_and_foreign_annotator_are_missing(batch, annotators, staff_user):
    _answer(annotators[0], batch, 2)
    other = Study.objects.create(name="Other", slug="other-study")
    c = client_for(annotators[0])
    assert c.get(reverse("annotations:my_answers", args=[other.slug])).status_code == 404
    assert c.get(reverse("annotations:my_answers", args=["no-such"])).status_code == 404
    # An annotator with no assignment in the study: the page does not exist for them.
    outsider = client_for(annotators[2])
    assert (
        outsider.get(reverse("annotations:my_answers", args=[batch.study.slug])).status_code == 404
    )


def test_survey_and_home_link_to_the_page(batch, annotators):
    c = client_for(annotators[0])
    url = reverse("annotations:my_answers", args=[batch.study.slug])
    assert url in c.get(reverse("annotations:home")).content.decode()
    survey = c.get(reverse("annotations:batch_next", args=[batch.pk]), follow=True)
    assert url in survey.content.decode()

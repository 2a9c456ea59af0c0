"""Queries compiled once per process (annotations.common.compiled) give what the ORM gives, for
every value they are run with; and the survey's compiled queue peek agrees with the queue head."""

import pytest
from django.contrib.auth import get_user_model
from django.db.models import Exists, OuterRef
from django.utils import timezone

from annotations import selectors, services
from annotations.common.compiled import CompiledQuery
from annotations.models import Annotation, Assignment, ConsentRecord, StudyConsent

pytestmark = pytest.mark.django_db


def _own_rows(annotator, batch_id):
    return Assignment.objects.filter(annotator=annotator, batch_id=batch_id, is_active=True)


def test_a_values_query_gives_the_orms_rows_for_every_value(batch, annotators):
    query = CompiledQuery(
        lambda annotator, batch_id, size: (
            _own_rows(annotator, batch_id)
            .order_by("position")
            .values_list("pk", "position", "served_at", "item__item_id")[:size]
        ),
        values=("annotator", "batch_id"),
    )
    Assignment.objects.filter(batch=batch).update(served_at="2026-01-02T03:04:05Z")
    for annotator in annotators:
        for size in (1, 3):
            expected = list(
                _own_rows(annotator, batch.pk)
                .order_by("position")
                .values_list("pk", "position", "served_at", "item__item_id", named=True)[:size]
            )
            got = query(annotator=annotator.pk, batch_id=batch.pk, size=size)
            assert got == expected  # converters applied: aware datetimes on SQLite too
            assert [row.item__item_id for row in got] == [row.item__item_id for row in expected]
    assert query(annotator=annotators[0].pk, batch_id=batch.pk + 999, size=3) == []


def test_a_values_query_keeps_the_order_values_list_was_given(batch, annotators):
    """An annotation named before a field: the SQL puts fields first, the row does not."""
    query = CompiledQuery(
        lambda annotator, batch_id: (
            _own_rows(annotator, batch_id)
            .annotate(answered=Exists(Annotation.objects.filter(assignment=OuterRef("pk"))))
            .values_list("answered", "pk")
            .order_by("pk")
        ),
        values=("annotator", "batch_id"),
    )
    first = _own_rows(annotators[0], batch.pk).order_by("position").first()
    services.annotation_submit(assignment=first, hard_refusal=True, cue_label=None)
    rows = query(annotator=annotators[0].pk, batch_id=batch.pk)
    assert rows[0]._fields == ("answered", "pk")
    assert {row.pk: bool(row.answered) for row in rows} == {
        row.pk: row.pk == first.pk for row in _own_rows(annotators[0], batch.pk)
    }


def test_a_model_query_gives_instances_with_their_related_rows(batch, annotators):
    query = CompiledQuery(
        lambda annotator, assignment_id: (
            Assignment.objects.select_related("batch__study", "item")
            .only("position", "batch__name", "batch__study__slug", "item__item_id")
            .filter(annotator=annotator, pk=assignment_id)
        ),
        values=("annotator", "assignment_id"),
    )
    for row in _own_rows(annotators[0], batch.pk):
        [got] = query(annotator=annotators[0].pk, assignment_id=row.pk)
        assert isinstance(got, Assignment) and got.pk == row.pk
        assert (got.position, got.item.item_id) == (row.position, row.item.item_id)
        assert got.batch.study.slug == batch.study.slug
        assert not got._state.adding and got._state.db == "default"
    # Another annotator's assignment is not theirs.
    other = _own_rows(annotators[1], batch.pk).first()
    assert query(annotator=annotators[0].pk, assignment_id=other.pk) == []


def test_the_compiled_selectors_match_the_orm(batch, annotators):
    """The survey's compiled queries: the assignment rows, the consent state and the user."""
    annotator = annotators[0]
    for row in _own_rows(annotator, batch.pk):
        page = selectors.assignment_for_annotator(annotator=annotator, assignment_id=row.pk)
        answer = selectors.assignment_for_annotator(
            annotator=annotator, assignment_id=row.pk, for_answer=True
        )
        assert page.pk == answer.pk == row.pk
        assert page.item.prompt == answer.item.prompt == row.item.prompt
        assert answer.batch.study.min_seconds_per_item == batch.study.min_seconds_per_item
    study = batch.study
    assert selectors.consent_state(annotator_id=annotator.pk, study_id=study.pk) == (None, True)
    first = StudyConsent.objects.create(study=study, version=1, consent_text="v1")
    assert selectors.consent_state(annotator_id=annotator.pk, study_id=study.pk) == (1, False)
    ConsentRecord.objects.create(
        consent=first, annotator=annotator, study=study, version=1, agreed_at=timezone.now()
    )
    assert selectors.consent_state(annotator_id=annotator.pk, study_id=study.pk) == (1, True)
    StudyConsent.objects.create(study=study, version=2, consent_text="v2")
    assert selectors.consent_state(annotator_id=annotator.pk, study_id=study.pk) == (2, False)
    assert selectors.consent_state(annotator_id=annotators[1].pk, study_id=study.pk) == (2, False)


def test_the_queue_peek_agrees_with_the_queue_head_through_a_batch(batch, annotators):
    """Skips, answers and a withdrawn item: the compiled peek names the rows the ORM head does."""
    annotator = annotators[0]
    queue = list(_own_rows(annotator, batch.pk).order_by("position"))

    def agree():
        for size in (1, 2, 3):
            head = selectors.assignment_queue_head(
                annotator=annotator, batch_id=batch.pk, size=size
            )
            peek = selectors.assignment_queue_peek(
                annotator=annotator, batch_id=batch.pk, size=size
            )
            assert [r.pk for r in peek] == [r.pk for r in head]
            assert [r.item_id for r in peek] == [r.item_id for r in head]
            assert [r.item__intent for r in peek] == [r.item.intent for r in head]
            assert {r.batch__study_id for r in peek} <= {batch.study_id}

    agree()
    services.assignment_skip(assignment=queue[0])
    agree()
    Assignment.objects.filter(pk=queue[2].pk).update(is_active=False)
    agree()
    for row in queue[1:]:
        if row.pk != queue[2].pk:
            services.annotation_submit(assignment=row, hard_refusal=True, cue_label=None)
            agree()
    services.annotation_submit(assignment=queue[0], hard_refusal=True, cue_label=None)
    agree()
    assert selectors.assignment_queue_peek(annotator=annotator, batch_id=batch.pk) == []


def test_a_value_the_orm_folds_into_the_sql_is_refused():
    """A value that does not end up a parameter (here a slice, which Django writes into the
    SQL text, or a value the query ignores) would be ignored on every later call."""
    for build in (
        lambda limit: get_user_model().objects.values_list("pk")[:limit],
        lambda limit: get_user_model().objects.values_list("pk"),
    ):
        query = CompiledQuery(build, values=("limit",))
        with pytest.raises(ValueError, match="not a parameter|Negative indexing"):
            query(limit=3)


def test_each_shape_compiles_its_own_sql(annotators):
    query = CompiledQuery(
        lambda size, first: (
            get_user_model().objects.filter(pk__gte=first).order_by("pk").values_list("pk")[:size]
        ),
        values=("first",),
    )
    first = min(a.user_id for a in annotators)
    assert len(query(size=1, first=first)) == 1
    assert len(query(size=2, first=first)) == 2
    assert len(query(size=1, first=first + 1)) == 1
    assert query(size=1, first=first + 1)[0].pk == first + 1

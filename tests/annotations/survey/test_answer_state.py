"""An accepted answer is never lost, an imported label never overwritten, an unserved answer
never normal (issue 20 items 2, 3 and 4).

The concurrency tests run on whichever database the suite runs on; CI runs them on PostgreSQL
(DATABASE_URL), where the race of item 2 was found.
"""

from __future__ import annotations

import threading
import time

import pytest
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.urls import reverse

from annotations import selectors, services
from annotations.imports import importers
from annotations.models import Annotation, Assignment, Batch
from tests.support.django_fixtures import client_for

HEADER = "item_id,annotator,annotator_group,hard_refusal,cue\n"


def _open_rows(batch, annotator):
    return Assignment.objects.filter(batch=batch, annotator=annotator, is_active=True).order_by(
        "position"
    )


def _answers_on_inactive_assignments() -> int:
    return Annotation.objects.filter(assignment__is_active=False).count()


# --- item 2: the assignment's state is read under its row lock ------------------------------


@pytest.mark.django_db
def test_an_answer_to_an_assignment_reassigned_after_loading_is_refused(batch, annotators):
    row = _open_rows(batch, annotators[0]).first()
    loaded = selectors.assignment_for_annotator(
        annotator=annotators[0], assignment_id=row.pk, for_answer=True
    )
    services.assignments_reassign(
        batch=batch, from_annotator=annotators[0], to_annotators=[annotators[2]]
    )
    with pytest.raises(ValidationError, match="handed to someone else"):
        services.annotation_submit(assignment=loaded, hard_refusal=False, cue_label="erased")
    assert _answers_on_inactive_assignments() == 0


def _in_threads(*functions):
    errors = [None] * len(functions)

    def call(index, fn):
        try:
            errors[index] = fn()
        except Exception as exc:  # collected for the assertions
            errors[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=call, args=(i, f)) for i, f in enumerate(functions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return errors


@pytest.mark.django_db(transaction=True)
def test_reassigning_while_the_annotator_answers_loses_no_answer(batch, annotators):
    """Staff reassign (holding the rows) while the annotator's answer arrives: the answer is
    refused in plain words, and nothing lands on an inactive assignment."""
    row = _open_rows(batch, annotators[0]).first()
    loaded = Assignment.objects.select_related("batch__study").get(pk=row.pk)
    locked = threading.Event()

    def reassign():
        with transaction.atomic():
            services.assignments_reassign(
                batch=batch, from_annotator=annotators[0], to_annotators=[annotators[2]]
            )
            locked.set()
            time.sleep(0.5)  # the annotator's answer arrives now

    def answer():
        locked.wait(10)
        return services.annotation_submit(assignment=loaded, hard_refusal=False, cue_label="erased")

    reassigned, answered = _in_threads(reassign, answer)
    assert reassigned is None
    assert isinstance(answered, ValidationError), answered
    assert "handed to someone else" in str(answered)
    assert _answers_on_inactive_assignments() == 0
    assert not Assignment.objects.get(pk=row.pk).is_active


@pytest.mark.django_db(transaction=True)
def test_an_answer_committed_while_staff_wait_stays_with_its_annotator(batch, annotators):
    """The other order: the answer holds the row when staff reassign; the answered item is
    not moved, so the answer stays in every export."""
    row = _open_rows(batch, annotators[0]).first()
    loaded = Assignment.objects.select_related("batch__study").get(pk=row.pk)
    answering = threading.Event()

    def answer():
        with transaction.atomic():
            services.annotation_submit(assignment=loaded, hard_refusal=False, cue_label="erased")
            answering.set()
            time.sleep(0.5)  # staff press "reassign" now

    def reassign():
        answering.wait(10)
        return services.assignments_reassign(
            batch=batch, from_annotator=annotators[0], to_annotators=[annotators[2]]
        )

    answered, moved = _in_threads(answer, reassign)
    assert answered is None, answered
    assert not isinstance(moved, Exception), moved
    assert Assignment.objects.get(pk=row.pk).is_active
    assert _answers_on_inactive_assignments() == 0
    assert Annotation.objects.filter(assignment_id=row.pk).count() == 1


@pytest.mark.django_db
def test_the_survey_tells_the_annotator_plainly(batch, annotators, monkeypatch):
    client = client_for(annotators[0])
    row = _open_rows(batch, annotators[0]).first()
    client.get(reverse("annotations:assignment", args=[row.pk]))
    real = selectors.assignment_for_annotator

    def loaded_then_reassigned(**kwargs):
        found = real(**kwargs)
        services.assignments_reassign(
            batch=batch, from_annotator=annotators[0], to_annotators=[annotators[2]]
        )
        return found

    monkeypatch.setattr(selectors, "assignment_for_annotator", loaded_then_reassigned)
    response = client.post(reverse("annotations:answer", args=[row.pk]), {"answer": "erased"})
    assert response.status_code == 400
    assert "handed to someone else" in response.content.decode()
    assert _answers_on_inactive_assignments() == 0


# --- item 3: imported labels take no answer on any path -------------------------------------


@pytest.mark.django_db
def test_imported_labels_take_no_answer_or_skip_on_any_path(batch, annotators):
    importers.annotations_import(
        study=batch.study, csv_text=HEADER + "item-0,ann2,,true,\nitem-5,ann2,,true,\n"
    )
    imported = Assignment.objects.filter(batch__policy=Batch.Policy.IMPORTED).first()
    before = Annotation.objects.get(assignment=imported)
    client = client_for(annotators[2])
    assert client.get(reverse("annotations:assignment", args=[imported.pk])).status_code == 404
    answer = client.post(reverse("annotations:answer", args=[imported.pk]), {"answer": "erased"})
    skip = client.post(reverse("annotations:skip", args=[imported.pk]))
    assert (answer.status_code, skip.status_code) == (404, 404)
    with pytest.raises(ValidationError, match="imported labels"):
        services.annotation_submit(assignment=imported, hard_refusal=False, cue_label="erased")
    with pytest.raises(ValidationError, match="imported labels"):
        services.assignment_skip(assignment=imported)
    after = Annotation.objects.get(assignment=imported)
    assert (after.hard_refusal, after.cue_label, after.revision) == (
        before.hard_refusal,
        before.cue_label,
        before.revision,
    )
    assert Assignment.objects.get(pk=imported.pk).skipped_at is None


# --- item 4: no served time, no normal answer -----------------------------------------------


@pytest.mark.django_db
def test_an_answer_posted_without_loading_the_item_is_flagged(batch, annotators):
    client = client_for(annotators[0])
    row = _open_rows(batch, annotators[0]).first()
    client.post(reverse("annotations:answer", args=[row.pk]), {"answer": "retained"})
    annotation = Annotation.objects.get(assignment=row)
    assert annotation.served_at is None and annotation.seconds_to_answer is None
    assert annotation.too_fast


@pytest.mark.django_db
def test_an_answer_after_loading_the_item_is_normal(batch, annotators):
    client = client_for(annotators[0])
    row = _open_rows(batch, annotators[0]).first()
    client.get(reverse("annotations:assignment", args=[row.pk]))
    client.post(reverse("annotations:answer", args=[row.pk]), {"answer": "retained"})
    assert not Annotation.objects.get(assignment=row).too_fast

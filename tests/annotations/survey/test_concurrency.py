"""Concurrent requests cannot duplicate: database constraints, not only Python checks."""

import threading

import pytest
from django.db import IntegrityError, connection

from annotations import services
from annotations.models import Annotation, AnnotationHistory, Assignment
from annotations.policies import PolicyError

pytestmark = pytest.mark.django_db(transaction=True)


def run_together(functions):
    """Start the functions at the same moment in threads; return what each returned or raised."""
    barrier = threading.Barrier(len(functions))
    results = [None] * len(functions)

    def call(index, fn):
        try:
            barrier.wait()
            results[index] = fn()
        except Exception as exc:  # collected for the assertions
            results[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=call, args=(i, fn)) for i, fn in enumerate(functions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return results


def test_simultaneous_submissions_of_one_assignment_yield_one_annotation(batch, annotators):
    assignment = Assignment.objects.filter(batch=batch, annotator=annotators[0]).first()
    results = run_together(
        [
            lambda: services.annotation_submit(
                assignment=Assignment.objects.select_related("batch__study").get(pk=assignment.pk),
                hard_refusal=False,
                cue_label="erased",
            )
            for _ in range(4)
        ]
    )
    assert not [r for r in results if isinstance(r, Exception)], results
    annotation = Annotation.objects.get(assignment=assignment)
    assert (
        annotation.revision == 1
        and AnnotationHistory.objects.filter(annotation=annotation).count() == 1
    )


def test_concurrent_batch_creation_never_assigns_an_item_twice_to_one_annotator(
    imported_study, annotators
):
    chosen = annotators[:2]
    results = run_together(
        [
            lambda seed=seed: services.batch_create(
                request=services.batch_request_build(
                    study=imported_study,
                    name=f"b{seed}",
                    policy="k_overlap",
                    annotators=chosen,
                    overlap_k=2,
                    seed=seed,
                )
            )
            for seed in range(3)
        ]
    )
    pairs = list(Assignment.objects.values_list("item_id", "annotator_id"))
    assert len(pairs) == len(set(pairs)) == 6 * 2
    assert any(not isinstance(r, Exception) for r in results)
    assert all(
        isinstance(r, (IntegrityError, PolicyError)) for r in results if isinstance(r, Exception)
    ), results


def test_the_database_itself_refuses_a_duplicate_assignment(batch, annotators):
    existing = Assignment.objects.filter(batch=batch).first()
    with pytest.raises(IntegrityError):
        Assignment.objects.create(
            batch=batch, item=existing.item, annotator=existing.annotator, position=99
        )


def test_the_database_refuses_a_cue_label_on_a_refusal(batch):
    from django.utils import timezone

    assignment = Assignment.objects.filter(batch=batch).first()
    with pytest.raises(IntegrityError):
        Annotation.objects.create(
            assignment=assignment,
            hard_refusal=True,
            cue_label="erased",
            submitted_at=timezone.now(),
            updated_at=timezone.now(),
        )


def test_an_answer_from_a_stale_page_becomes_an_edit_not_a_loss(batch, annotators):
    """Two tabs loaded the same unanswered assignment; the second answer is a new revision."""
    rows = Assignment.objects.select_related("batch__study")
    first_tab = rows.get(batch=batch, annotator=annotators[0], position=1)
    second_tab = rows.get(pk=first_tab.pk)
    services.annotation_submit(assignment=first_tab, hard_refusal=False, cue_label="erased")
    assert second_tab.answered_at is None  # it still looks unanswered to the second tab
    same = services.annotation_submit(assignment=second_tab, hard_refusal=False, cue_label="erased")
    assert same.revision == 1
    edited = services.annotation_submit(
        assignment=second_tab,
        hard_refusal=True,
        cue_label=None,
    )
    assert edited.revision == 2 and edited.hard_refusal
    history = AnnotationHistory.objects.filter(annotation=edited).order_by("revision")
    assert [(h.revision, h.hard_refusal, h.cue_label) for h in history] == [
        (1, False, "erased"),
        (2, True, ""),
    ]

"""Writes of the qualification round, one transaction each (docs/annotation.md#qualification-round):
an annotator starts an attempt, its last answer finishes it, staff allow another attempt or
qualify an annotator. Staff decisions write a QualificationReview row (who, when, why)."""

from __future__ import annotations

import numpy as np
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext_lazy

from annotations.models import Annotation, Annotator, Assignment, Batch
from annotations.qualification import rules, status
from annotations.qualification.models import QualificationAttempt, QualificationReview

# Shown on the survey page, in the annotator's language.
QUALIFICATION_FIRST = gettext_lazy(
    "Pass the qualification round first: this batch's items open after it."
)
ANSWERS_FINAL = gettext_lazy(
    "This qualification round is finished: its answers can no longer be changed."
)


def attempt_start(*, batch: Batch, annotator: Annotator) -> QualificationAttempt:
    """Begin the annotator's next attempt: ``items`` gold items they were never given, drawn
    with a generator seeded by (batch seed, annotator, attempt number), queued after the batch's
    items. A running attempt is returned as it is, so a repeated click starts nothing new."""
    requirement = status.requirement_of(batch)
    if requirement is None:
        raise ValidationError("this batch has no qualification round")
    with transaction.atomic():
        # One start at a time per annotator: the state read below stays true until commit.
        Annotator.objects.select_for_update().filter(pk=annotator.pk).first()
        state = status.annotator_state(batch=batch, annotator=annotator)
        if state.in_progress:
            return state.latest
        if state.qualified:
            raise ValidationError(gettext_lazy("You already qualified for this batch."))
        if not state.attempts_left:
            raise ValidationError(
                gettext_lazy("No attempts are left; the study's staff can allow another.")
            )
        fresh = status.fresh_gold(study=batch.study, annotator=annotator)
        if len(fresh) < requirement.items:
            raise ValidationError(
                gettext_lazy(
                    "Not enough unused gold items for another attempt; ask the study's staff."
                )
            )
        number = len(state.attempts) + 1
        rng = np.random.default_rng([batch.seed, annotator.pk, number])
        chosen = rules.gold_draw(fresh, requirement.items, rng)
        attempt = QualificationAttempt.objects.create(
            batch=batch, annotator=annotator, number=number, started_at=timezone.now()
        )
        start = batch.assignments.aggregate(m=Max("position"))["m"] or 0
        Assignment.objects.bulk_create(
            [
                Assignment(
                    batch=batch,
                    item_id=item,
                    annotator=annotator,
                    position=start + offset,
                    qualification_attempt=attempt,
                )
                for offset, item in enumerate(chosen, start=1)
            ]
        )
    return attempt


def attempt_lock_open(*, assignment: Assignment) -> QualificationAttempt:
    """The attempt a qualification answer is for, locked; refused once it finished (its result
    is final, so its answers are too). Called inside the answer's transaction."""
    attempt = QualificationAttempt.objects.select_for_update().get(
        pk=assignment.qualification_attempt_id
    )
    if attempt.finished_at is not None:
        raise ValidationError(ANSWERS_FINAL)
    return attempt


def attempt_finish_if_complete(*, attempt: QualificationAttempt) -> None:
    """Write the attempt's result once its last item is answered (inside the answer's
    transaction, with the attempt locked by ``attempt_lock_open``)."""
    items = Assignment.objects.filter(qualification_attempt=attempt, is_active=True)
    if items.filter(answered_at__isnull=True).exists():
        return
    answers = Annotation.objects.filter(assignment__in=items).values(
        "hard_refusal",
        "cue_label",
        "assignment__item__gold_hard_refusal",
        "assignment__item__gold_cue",
    )
    result = rules.attempt_result(
        (
            {
                "hard_refusal": a["hard_refusal"],
                "cue": a["cue_label"],
                "gold_hard_refusal": a["assignment__item__gold_hard_refusal"],
                "gold_cue": a["assignment__item__gold_cue"],
            }
            for a in answers
        ),
        pass_mark=attempt.batch.qualification_pass_mark,
    )
    attempt.finished_at = timezone.now()
    attempt.correct, attempt.answered, attempt.passed = (
        result.correct,
        result.answered,
        result.passed,
    )
    attempt.save(update_fields=["finished_at", "correct", "answered", "passed"])


def attempt_settle(*, batch: Batch, annotator: Annotator) -> QualificationAttempt | None:
    """Finish the annotator's running attempt if none of its items is left open (staff excluded
    or withdrew the last ones): scored on what was answered. The finished attempt, or None."""
    with transaction.atomic():
        attempt = (
            QualificationAttempt.objects.select_for_update()
            .filter(batch=batch, annotator=annotator, finished_at__isnull=True)
            .first()
        )
        if attempt is None:
            return None
        attempt_finish_if_complete(attempt=attempt)
        return attempt if attempt.finished_at is not None else None


def attempt_grant(
    *, batch: Batch, annotator: Annotator, attempts_allowed: int, user, reason: str = ""
) -> QualificationReview | None:
    """Staff allow the annotator ``attempts_allowed`` attempts in all (one more than now, from
    the page). Setting a total, not adding one: a repeated request changes nothing (None)."""
    with transaction.atomic():
        state = _locked_state(batch, annotator)
        if state.qualified:
            raise ValidationError(f"{annotator} is already qualified for this batch")
        if attempts_allowed <= state.attempts_allowed:
            return None
        return QualificationReview.objects.create(
            batch=batch,
            annotator=annotator,
            action=QualificationReview.Action.GRANT_ATTEMPT,
            attempts_allowed=attempts_allowed,
            reason=(reason or "").strip()[:2000],
            acted_by=user,
            acted_at=timezone.now(),
        )


def qualification_override(
    *, batch: Batch, annotator: Annotator, user, reason: str = ""
) -> QualificationReview | None:
    """Staff qualify the annotator without a passed attempt: the batch's items open to them.
    The gold items of a running attempt leave their queue (kept, inactive, for history).
    None when they are qualified already (nothing changed)."""
    with transaction.atomic():
        state = _locked_state(batch, annotator)
        if state.qualified:
            return None
        Assignment.objects.filter(
            batch=batch,
            annotator=annotator,
            qualification_attempt__isnull=False,
            answered_at__isnull=True,
        ).update(is_active=False)
        return QualificationReview.objects.create(
            batch=batch,
            annotator=annotator,
            action=QualificationReview.Action.OVERRIDE,
            reason=(reason or "").strip()[:2000],
            acted_by=user,
            acted_at=timezone.now(),
        )


def _locked_state(batch, annotator) -> status.QualificationState:
    if status.requirement_of(batch) is None:
        raise ValidationError(f"batch {batch.name} has no qualification round")
    if not Assignment.objects.filter(batch=batch, annotator=annotator).exists():
        raise ValidationError(f"{annotator} has no items in batch {batch.name}")
    Annotator.objects.select_for_update().filter(pk=annotator.pk).first()
    return status.annotator_state(batch=batch, annotator=annotator)

"""Reads: the survey's gate, one annotator's qualification state, the staff pages' rows
(docs/annotation.md#qualification-round)."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Exists, OuterRef, Q

from annotations.models import Annotator, Assignment, Batch, Item, Study
from annotations.qualification import rules
from annotations.qualification.models import QualificationAttempt, QualificationReview


def requirement_of(batch: Batch) -> rules.Requirement | None:
    """The batch's qualification round, or None where it has none (the default)."""
    if not batch.qualification_items:
        return None
    return rules.Requirement(
        batch.qualification_items,
        batch.qualification_pass_mark,
        batch.qualification_attempts_allowed,
    )


def servable_q():
    """Assignments the survey may serve or take answers for: every item of a batch without a
    qualification round, a qualification attempt's gold items, and a batch's items once their
    annotator passed an attempt or staff qualified them. One condition, evaluated in the
    query that picks the item, so the gate costs no query of its own."""
    passed = QualificationAttempt.objects.filter(
        batch=OuterRef("batch"), annotator=OuterRef("annotator"), passed=True
    )
    overridden = QualificationReview.objects.filter(
        batch=OuterRef("batch"),
        annotator=OuterRef("annotator"),
        action=QualificationReview.Action.OVERRIDE,
    )
    return (
        Q(batch__qualification_items=0)
        | Q(qualification_attempt__isnull=False)
        | Q(Exists(passed))
        | Q(Exists(overridden))
    )


def batch_item_locked(*, assignment: Assignment) -> bool:
    """A batch item its annotator may not see or answer yet: the batch asks for a
    qualification they have not passed. No query for a batch without one."""
    if assignment.qualification_attempt_id is not None or not assignment.batch.qualification_items:
        return False
    return not Assignment.objects.filter(servable_q(), pk=assignment.pk).exists()


def gold_pool(*, study: Study):
    """The gold items an attempt draws from: the study's included gold items, harmful controls
    left out (a qualification item cannot be declined)."""
    return Item.objects.included().filter(study=study, is_gold=True).exclude(intent="harmful")


def fresh_gold(*, study: Study, annotator: Annotator) -> list[int]:
    """The gold items never assigned to the annotator (one assignment per item and annotator)."""
    return list(
        gold_pool(study=study)
        .exclude(assignments__annotator=annotator)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def fresh_gold_counts(
    *, study: Study, annotators: list[Annotator], planned_pairs=()
) -> dict[str, int]:
    """Per annotator's username: gold items neither assigned to them nor in ``planned_pairs``
    ((item pk, annotator pk) of a batch about to be made)."""
    pool = set(gold_pool(study=study).values_list("pk", flat=True))
    taken = set(
        Assignment.objects.filter(item__in=pool, annotator__in=annotators).values_list(
            "item_id", "annotator_id"
        )
    ) | {pair for pair in planned_pairs if pair[0] in pool}
    return {
        a.user.get_username(): sum(1 for item in pool if (item, a.pk) not in taken)
        for a in annotators
    }


@dataclass(frozen=True)
class QualificationState:
    """Where one annotator stands in one batch's qualification round."""

    requirement: rules.Requirement
    attempts: list[QualificationAttempt]
    attempts_allowed: int
    override: QualificationReview | None
    reviews: list[QualificationReview] = field(default_factory=list)

    @property
    def latest(self) -> QualificationAttempt | None:
        return self.attempts[-1] if self.attempts else None

    @property
    def passed_attempt(self) -> QualificationAttempt | None:
        return next((a for a in self.attempts if a.passed), None)

    @property
    def qualified(self) -> bool:
        return self.passed_attempt is not None or self.override is not None

    @property
    def in_progress(self) -> bool:
        return self.latest is not None and self.latest.finished_at is None

    @property
    def attempts_left(self) -> int:
        return max(0, self.attempts_allowed - len(self.attempts))

    @property
    def can_start(self) -> bool:
        """Another attempt may begin: not qualified, none running, one left."""
        return not self.qualified and not self.in_progress and self.attempts_left > 0

    @property
    def status(self) -> str:
        """One word for the staff pages and the annotator's page."""
        if self.passed_attempt is not None:
            return "passed"
        if self.override is not None:
            return "qualified by staff"
        if self.in_progress:
            return "in progress"
        if self.latest is None:
            return "not started"
        return "failed" if self.attempts_left else "failed, no attempts left"


def _state(requirement, attempts, reviews) -> QualificationState:
    grants = [
        r.attempts_allowed
        for r in reviews
        if r.action == QualificationReview.Action.GRANT_ATTEMPT and r.attempts_allowed
    ]
    override = next((r for r in reviews if r.action == QualificationReview.Action.OVERRIDE), None)
    return QualificationState(
        requirement,
        sorted(attempts, key=lambda a: a.number),
        rules.attempts_allowed(requirement.attempts, grants),
        override,
        sorted(reviews, key=lambda r: (r.acted_at, r.pk), reverse=True),
    )


def annotator_state(*, batch: Batch, annotator: Annotator) -> QualificationState | None:
    """The annotator's state in the batch's round (two queries), None without a round."""
    requirement = requirement_of(batch)
    if requirement is None:
        return None
    attempts = list(QualificationAttempt.objects.filter(batch=batch, annotator=annotator))
    reviews = list(
        QualificationReview.objects.filter(batch=batch, annotator=annotator).select_related(
            "acted_by"
        )
    )
    return _state(requirement, attempts, reviews)


def batch_rows(*, batch: Batch) -> list[dict]:
    """Per annotator of the batch: their qualification state (three queries); empty without a
    round."""
    requirement = requirement_of(batch)
    if requirement is None:
        return []
    annotators = (
        Annotator.objects.filter(assignments__batch=batch)
        .distinct()
        .select_related("user")
        .order_by("user__username")
    )
    attempts, reviews = _by_annotator(batch_ids=[batch.pk])
    return [
        {
            "annotator": a,
            "state": _state(
                requirement, attempts.get((batch.pk, a.pk), []), reviews.get((batch.pk, a.pk), [])
            ),
        }
        for a in annotators
    ]


def people_rows() -> dict[int, list[dict]]:
    """Annotator pk -> their state in every batch with a round they have an attempt or a staff
    decision in (three queries), for the People page."""
    attempts, reviews = _by_annotator(batch_ids=None)
    keys = sorted(set(attempts) | set(reviews))
    batches = Batch.objects.in_bulk({batch for batch, _ in keys})
    out: dict[int, list[dict]] = {}
    for batch_id, annotator_id in keys:
        batch = batches[batch_id]
        requirement = requirement_of(batch)
        if requirement is None:
            continue
        state = _state(
            requirement,
            attempts.get((batch_id, annotator_id), []),
            reviews.get((batch_id, annotator_id), []),
        )
        out.setdefault(annotator_id, []).append({"batch": batch, "state": state})
    return out


def _by_annotator(*, batch_ids):
    attempts_qs = QualificationAttempt.objects.all()
    reviews_qs = QualificationReview.objects.select_related("acted_by")
    if batch_ids is not None:
        attempts_qs = attempts_qs.filter(batch_id__in=batch_ids)
        reviews_qs = reviews_qs.filter(batch_id__in=batch_ids)
    attempts: dict[tuple[int, int], list] = {}
    for attempt in attempts_qs:
        attempts.setdefault((attempt.batch_id, attempt.annotator_id), []).append(attempt)
    reviews: dict[tuple[int, int], list] = {}
    for review in reviews_qs:
        reviews.setdefault((review.batch_id, review.annotator_id), []).append(review)
    return attempts, reviews


def attempt_finished(*, attempt_id: int) -> bool:
    return QualificationAttempt.objects.filter(pk=attempt_id, finished_at__isnull=False).exists()

"""Actions on an annotator: pause and resume, hand their open items to others, leave their labels
out of statistics (docs/annotation.md#annotator-quality), and the per-annotator rows the quality
page is computed from.

Every action runs in one transaction and writes an ``AnnotatorReview`` row beside its change.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Prefetch
from django.utils import timezone

from annotations import services
from annotations.models import (
    Annotation,
    Annotator,
    AnnotatorLabelExclusion,
    AnnotatorReview,
    Assignment,
    Batch,
    Study,
)
from annotations.policies import PolicyError


def _review(annotator, action, user, reason="", moved=0, study=None) -> AnnotatorReview:
    return AnnotatorReview.objects.create(
        annotator=annotator,
        study=study,
        action=action,
        reason=reason,
        moved_assignments=moved,
        acted_by=user,
        acted_at=timezone.now(),
    )


def _eligible_for(batch: Batch, annotator: Annotator) -> list[Annotator]:
    """Who may take the annotator's open items in this batch, by the batch's policy: the batch's
    other active annotators; for an expertise-matched batch, those of the same group when there
    are any."""
    others = list(
        Annotator.objects.filter(is_active=True, assignments__batch=batch)
        .exclude(pk=annotator.pk)
        .distinct()
        .order_by("pk")
    )
    if batch.policy == Batch.Policy.EXPERTISE and annotator.group:
        same_group = [a for a in others if a.group == annotator.group]
        if same_group:
            return same_group
    return others


def annotator_open_items_reassign(*, annotator: Annotator, study: Study | None = None) -> dict:
    """Hand every unanswered assignment of the annotator to the batch's other annotators
    (least-loaded first, ``services.assignments_reassign``); where nobody can take an item it
    is withdrawn, so nobody is left waiting on a paused annotator. Returns the counts."""
    batches = Batch.objects.filter(
        assignments__annotator=annotator,
        assignments__is_active=True,
        assignments__answered_at__isnull=True,
    ).distinct()
    if study is not None:
        batches = batches.filter(study=study)
    moved = withdrawn = 0
    with transaction.atomic():
        for batch in batches:
            targets = _eligible_for(batch, annotator)
            try:
                if not targets:
                    raise PolicyError("no other annotator")
                moved += services.assignments_reassign(
                    batch=batch, from_annotator=annotator, to_annotators=targets, seed=batch.seed
                )
            except PolicyError:
                withdrawn += Assignment.objects.filter(
                    batch=batch, annotator=annotator, is_active=True, answered_at__isnull=True
                ).update(is_active=False)
    return {"moved": moved, "withdrawn": withdrawn}


def annotator_pause(*, annotator: Annotator, user, reason: str = "") -> AnnotatorReview:
    """The annotator can no longer work; their open items go back to the pool."""
    with transaction.atomic():
        locked = Annotator.objects.select_for_update().get(pk=annotator.pk)
        if not locked.is_active:
            raise ValidationError(f"{locked} is already paused")
        Annotator.objects.filter(pk=locked.pk).update(is_active=False)
        counts = annotator_open_items_reassign(annotator=locked)
        annotator.is_active = False
        return _review(
            locked,
            AnnotatorReview.Action.PAUSE,
            user,
            reason.strip(),
            counts["moved"] + counts["withdrawn"],
        )


def annotator_resume(*, annotator: Annotator, user, reason: str = "") -> AnnotatorReview:
    """The annotator may work again (items handed to others stay with them)."""
    with transaction.atomic():
        locked = Annotator.objects.select_for_update().get(pk=annotator.pk)
        if locked.is_active:
            raise ValidationError(f"{locked} is not paused")
        Annotator.objects.filter(pk=locked.pk).update(is_active=True)
        annotator.is_active = True
        return _review(locked, AnnotatorReview.Action.RESUME, user, reason.strip())


def annotator_reassign(*, annotator: Annotator, study: Study, user) -> AnnotatorReview | None:
    """Hand the annotator's open items in this study to others without pausing them."""
    with transaction.atomic():
        counts = annotator_open_items_reassign(annotator=annotator, study=study)
        total = counts["moved"] + counts["withdrawn"]
        if not total:
            raise ValidationError(f"{annotator} has no open items in {study.slug}")
        return _review(
            annotator,
            AnnotatorReview.Action.REASSIGN,
            user,
            f"open items of {study.slug}",
            total,
            study=study,
        )


def annotator_labels_exclude(
    *, annotator: Annotator, study: Study, reason: str, user
) -> AnnotatorReview:
    """Leave the annotator's labels out of every statistic of ``study`` (their other studies
    are untouched); they stay in the database and the export (column
    ``annotator_labels_excluded``)."""
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError("give a reason for excluding the annotator's labels")
    with transaction.atomic():
        locked = Annotator.objects.select_for_update().get(pk=annotator.pk)
        if AnnotatorLabelExclusion.objects.filter(annotator=locked, study=study).exists():
            raise ValidationError(f"the labels of {locked} are already excluded in {study.slug}")
        now = timezone.now()
        AnnotatorLabelExclusion.objects.create(
            annotator=locked, study=study, reason=reason[:2000], excluded_at=now
        )
        # The study data fingerprint reads answers' updated_at: touching nothing would leave
        # cached metrics stale, so the fingerprint also counts exclusions (selectors).
        return _review(locked, AnnotatorReview.Action.EXCLUDE, user, reason, study=study)


def annotator_labels_include(
    *, annotator: Annotator, study: Study, user, reason: str = ""
) -> AnnotatorReview:
    with transaction.atomic():
        locked = Annotator.objects.select_for_update().get(pk=annotator.pk)
        if not AnnotatorLabelExclusion.objects.filter(annotator=locked, study=study).delete()[0]:
            raise ValidationError(f"the labels of {locked} are not excluded in {study.slug}")
        return _review(locked, AnnotatorReview.Action.INCLUDE, user, reason.strip(), study=study)


# --- reads for the quality page ------------------------------------------------------------


def study_annotators(*, study: Study) -> list[Annotator]:
    """Annotators with at least one assignment in the study, with their exclusion in it
    (``study_label_exclusions``, a list of zero or one; two queries)."""
    return list(
        Annotator.objects.filter(assignments__item__study=study)
        .distinct()
        .select_related("user")
        .prefetch_related(
            Prefetch(
                "label_exclusions",
                queryset=AnnotatorLabelExclusion.objects.filter(study=study),
                to_attr="study_label_exclusions",
            )
        )
        .order_by("user__username")
    )


def quality_answer_rows(*, study: Study) -> list[dict]:
    """Every active answer of the study's included items, gold ones included, with what the
    quality statistics need (one query)."""
    rows = Annotation.objects.filter(
        assignment__item__study=study,
        assignment__is_active=True,
        assignment__item__excluded_at__isnull=True,
        # Qualification answers judge the annotator before the work, not during it.
        assignment__qualification_attempt__isnull=True,
    ).values(
        "assignment__annotator__user__username",
        "assignment__item__item_id",
        "assignment__item__is_gold",
        "assignment__item__gold_hard_refusal",
        "assignment__item__gold_cue",
        "hard_refusal",
        "cue_label",
        "broken_image",
        "seconds_to_answer",
        "too_fast",
    )
    return [
        {
            "annotator": r["assignment__annotator__user__username"],
            "item_id": r["assignment__item__item_id"],
            "is_gold": r["assignment__item__is_gold"],
            "gold_hard_refusal": r["assignment__item__gold_hard_refusal"],
            "gold_cue": r["assignment__item__gold_cue"] or None,
            "hard_refusal": r["hard_refusal"],
            "cue": r["cue_label"] or None,
            "broken_image": r["broken_image"],
            "seconds_to_answer": r["seconds_to_answer"],
            "too_fast": r["too_fast"],
        }
        for r in rows
    ]


def annotator_reviews(*, annotator: Annotator, limit: int = 20) -> list[AnnotatorReview]:
    return list(annotator.reviews.select_related("acted_by")[:limit])

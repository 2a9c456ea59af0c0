"""Writes: import a manifest, create batches, serve and answer assignments, reassign.

Each service takes keyword-only arguments and runs in one transaction; database constraints
back every uniqueness rule, so retries and concurrent requests cannot duplicate anything.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.files import File
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.db.models import Count, Max
from django.utils import timezone

from . import policies
from .labels import NEUTRAL, LabelError, parse_cue_label
from .manifest import ImageInvalid, ImageLimits, check_image
from .models import (
    Annotation,
    AnnotationHistory,
    Annotator,
    Assignment,
    AttributeValue,
    AutomatedJudgment,
    Batch,
    Item,
    ItemReview,
    Study,
)

Progress = Callable[[int, int], None] | None


def image_limits() -> ImageLimits:
    return ImageLimits(
        max_bytes=settings.ACRB_MAX_IMAGE_BYTES, max_pixels=settings.ACRB_MAX_IMAGE_PIXELS
    )


# --- studies and items -------------------------------------------------------------------


def study_create(*, name: str, slug: str, mode: str = "t2i", overlap_k: int = 2, **fields) -> Study:
    return Study.objects.create(name=name, slug=slug, mode=mode, overlap_k=overlap_k, **fields)


def attribute_value_get_or_create(
    *, study: Study, attribute: str, value: str, cue_description: str = ""
) -> AttributeValue:
    obj, created = AttributeValue.objects.get_or_create(
        study=study,
        attribute=attribute,
        value=value,
        defaults={"cue_description": cue_description, "is_neutral": attribute == NEUTRAL},
    )
    if not created and cue_description and not obj.cue_description:
        obj.cue_description = cue_description
        obj.save(update_fields=["cue_description"])
    return obj


def item_set_gold(*, item: Item, hard_refusal: bool, cue: str | None) -> Item:
    item.is_gold = True
    item.gold_hard_refusal = hard_refusal
    item.gold_cue = parse_cue_label(cue, hard_refusal=hard_refusal) or ""
    item.save(update_fields=["is_gold", "gold_hard_refusal", "gold_cue"])
    return item


# --- annotators ----------------------------------------------------------------------------


def annotator_create(
    *, username: str, group: str = "", password: str | None = None, expertise: str = ""
) -> Annotator:
    user_model = get_user_model()
    user = user_model.objects.create_user(username=username, password=password)
    if password is None:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return Annotator.objects.create(user=user, group=group, expertise=expertise)


# --- batches -------------------------------------------------------------------------------


def batch_create(
    *,
    study: Study,
    name: str,
    policy: str,
    annotators: list[Annotator],
    overlap_k: int | None = None,
    seed: int | None = None,
    item_ids: list[int] | None = None,
    manual_pairs=None,
    gold_per_annotator: int = 0,
    gold_rate: float = 0.0,
    created_by=None,
) -> Batch:
    """Create a batch with the chosen policy (all non-gold items, or ``item_ids``).

    Items already assigned to an annotator are never assigned to them again: the policies
    skip existing pairs, and a unique constraint enforces it under concurrency. The seed is
    stored on the batch so the assignment can be reproduced.
    """
    k = overlap_k or study.overlap_k
    seed = int(np.random.SeedSequence().entropy % 2**62) if seed is None else int(seed)
    rng = np.random.default_rng(seed)
    rows = Item.objects.filter(study=study, is_gold=False)
    if item_ids is not None:
        rows = rows.filter(pk__in=item_ids)
    # Plain tuples, not model instances: a study can hold 100,000 items.
    items = [
        policies.PolicyItem(pk, value, int(review))
        for pk, value, review in rows.values_list("pk", "attribute_value__value", "needs_review")
    ]
    pool = [policies.PolicyAnnotator(a.pk, a.group, 0) for a in annotators]
    existing = set(
        Assignment.objects.filter(item__study=study, annotator__in=annotators).values_list(
            "item_id", "annotator_id"
        )
    )
    try:
        pairs = _policy_pairs(policy, items, pool, k, rng, existing, manual_pairs)
    except policies.ItemPolicyError as error:  # name the item as the study does, not its id
        item_id = Item.objects.filter(pk=error.item).values_list("item_id", flat=True).first()
        raise policies.PolicyError(f"item {item_id or error.item!r}: {error.reason}") from None
    if gold_per_annotator:
        gold = list(Item.objects.filter(study=study, is_gold=True).values_list("pk", flat=True))
        pairs += policies.gold_pairs(gold, pool, gold_per_annotator, rng, existing_pairs=existing)
    if gold_rate:
        gold = list(Item.objects.filter(study=study, is_gold=True).values_list("pk", flat=True))
        already = existing | set(pairs)
        pairs += policies.gold_pairs_at_rate(
            gold, pairs, pool, gold_rate, rng, existing_pairs=already
        )
    positions = policies.queue_positions(pairs, {i.item: i.priority for i in items}, rng)
    params = {
        "annotators": [a.pk for a in annotators],
        "gold_per_annotator": gold_per_annotator,
        "gold_rate": gold_rate,
    }
    with transaction.atomic():
        batch = Batch.objects.create(
            study=study,
            name=name,
            policy=policy,
            overlap_k=k,
            seed=seed,
            created_by=created_by,
            params=params,
        )
        Assignment.objects.bulk_create(
            [
                Assignment(
                    batch=batch,
                    item_id=item,
                    annotator_id=annotator,
                    position=positions[(item, annotator)],
                )
                for item, annotator in pairs
            ],
            batch_size=5000,
        )
    return batch


def _policy_pairs(policy, items, pool, k, rng, existing, manual_pairs) -> list[tuple[int, int]]:
    if policy == Batch.Policy.K_OVERLAP:
        return policies.k_overlap_balanced(items, pool, k, rng, existing_pairs=existing)
    if policy == Batch.Policy.EXPERTISE:
        return policies.expertise_matched(items, pool, k, rng, existing_pairs=existing)
    if policy == Batch.Policy.MANUAL:
        pairs = policies.manual(
            manual_pairs or [],
            known_items={i.item for i in items},
            known_annotators={a.annotator for a in pool},
        )
        return [p for p in pairs if p not in existing]
    raise policies.PolicyError(f"unknown policy {policy!r}")


def batch_add_annotators(
    *, batch: Batch, annotators: list[Annotator], items_per_annotator: int | None = None
) -> int:
    """Give newly added annotators a share of the batch's items (k more labels for those items)."""
    items = list(
        Item.objects.filter(assignments__batch=batch, is_gold=False)
        .distinct()
        .select_related("attribute_value")
    )
    if items_per_annotator is not None:
        rng = np.random.default_rng(batch.seed + batch.assignments.count())
        items = [
            items[i]
            for i in rng.choice(
                len(items), size=min(items_per_annotator, len(items)), replace=False
            )
        ]
    rng = np.random.default_rng(batch.seed + 1)
    existing = set(
        Assignment.objects.filter(annotator__in=annotators, item__in=items).values_list(
            "item_id", "annotator_id"
        )
    )
    pairs = [(i.pk, a.pk) for i in items for a in annotators if (i.pk, a.pk) not in existing]
    start = batch.assignments.aggregate(m=Max("position"))["m"] or 0
    positions = policies.queue_positions(pairs, {}, rng)
    with transaction.atomic():
        Assignment.objects.bulk_create(
            [
                Assignment(
                    batch=batch, item_id=i, annotator_id=a, position=start + 1 + positions[(i, a)]
                )
                for i, a in pairs
            ]
        )
    return len(pairs)


def assignments_reassign(
    *, batch: Batch, from_annotator: Annotator, to_annotators: list[Annotator], seed: int = 0
) -> int:
    """Move an annotator's unanswered assignments to others (least-loaded first).

    The old rows stay, marked inactive and linked from the new ones, so history is kept.
    """
    rng = np.random.default_rng(seed)
    with transaction.atomic():
        open_rows = list(
            Assignment.objects.select_for_update(of=("self",)).filter(
                batch=batch, annotator=from_annotator, is_active=True, annotation__isnull=True
            )
        )
        loads = dict(
            Assignment.objects.filter(
                batch=batch, annotator__in=to_annotators, is_active=True, annotation__isnull=True
            )
            .values("annotator")
            .annotate(n=Count("id"))
            .values_list("annotator", "n")
        )
        pool = [policies.PolicyAnnotator(a.pk, a.group, loads.get(a.pk, 0)) for a in to_annotators]
        existing = set(
            Assignment.objects.filter(
                item__in=[r.item_id for r in open_rows], annotator__in=to_annotators
            ).values_list("item_id", "annotator_id")
        )
        pairs = policies.k_overlap_balanced(
            [policies.PolicyItem(r.item_id) for r in open_rows],
            pool,
            1,
            rng,
            existing_pairs=existing,
        )
        target = dict(pairs)
        start = batch.assignments.aggregate(m=Max("position"))["m"] or 0
        for offset, row in enumerate(open_rows, start=1):
            row.is_active = False
            row.save(update_fields=["is_active"])
            Assignment.objects.create(
                batch=batch,
                item_id=row.item_id,
                annotator_id=target[row.item_id],
                position=start + offset,
                reassigned_from=row,
            )
    return len(open_rows)


# --- the survey ----------------------------------------------------------------------------


def assignment_mark_served(*, assignment: Assignment) -> None:
    """Record the first time the item was shown; later views keep the first time."""
    if assignment.served_at is None:
        now = timezone.now()
        Assignment.objects.filter(pk=assignment.pk, served_at__isnull=True).update(served_at=now)
        assignment.served_at = now


def assignment_skip(*, assignment: Assignment) -> None:
    Assignment.objects.filter(pk=assignment.pk).update(skipped_at=timezone.now())


def annotation_submit(
    *,
    assignment: Assignment,
    hard_refusal: bool,
    cue_label: str | None,
    note: str = "",
    broken_image: bool = False,
    user=None,
) -> Annotation:
    """Create or edit the one answer of an assignment, writing a history row for each version.

    A resubmission identical to the stored answer (a double click, a retried request) changes
    nothing; a different answer is an edit and becomes a new revision.
    """
    if not assignment.is_active:
        raise ValidationError("this assignment was reassigned and no longer takes answers")
    try:
        cue = parse_cue_label(cue_label, hard_refusal=hard_refusal) or ""
    except LabelError as exc:
        raise ValidationError(str(exc)) from None
    note = (note or "").strip()[:5000]
    now = timezone.now()
    with transaction.atomic():
        existing = None
        if assignment.answered_at is not None:  # answered before: this is an edit
            existing = Annotation.objects.select_for_update().filter(assignment=assignment).first()
        if existing is None:  # a first answer, the common case: insert without a lookup
            try:
                with transaction.atomic():
                    annotation = _annotation_create(
                        assignment, hard_refusal, cue, note, broken_image, now
                    )
            except IntegrityError:  # a concurrent request created it first: treat ours as an edit
                existing = Annotation.objects.select_for_update().get(assignment=assignment)
            else:
                history_write(annotation, user, now)
                return annotation
        if (existing.hard_refusal, existing.cue_label, existing.note, existing.broken_image) == (
            hard_refusal,
            cue,
            note,
            broken_image,
        ):
            return existing
        existing.hard_refusal, existing.cue_label, existing.note, existing.broken_image = (
            hard_refusal,
            cue,
            note,
            broken_image,
        )
        existing.revision += 1
        existing.updated_at = now
        existing.save()
        history_write(existing, user, now)
        return existing


def _annotation_create(assignment, hard_refusal, cue, note, broken_image, now) -> Annotation:
    served = assignment.served_at
    seconds = (now - served).total_seconds() if served else None
    minimum = assignment.batch.study.min_seconds_per_item
    Assignment.objects.filter(pk=assignment.pk).update(answered_at=now)
    assignment.answered_at = now
    return Annotation.objects.create(
        assignment=assignment,
        hard_refusal=hard_refusal,
        cue_label=cue,
        note=note,
        broken_image=broken_image,
        served_at=served,
        submitted_at=now,
        updated_at=now,
        seconds_to_answer=seconds,
        too_fast=seconds is not None and seconds < minimum,
    )


def history_write(annotation: Annotation, user, now) -> None:
    AnnotationHistory.objects.create(
        annotation=annotation,
        revision=annotation.revision,
        hard_refusal=annotation.hard_refusal,
        cue_label=annotation.cue_label,
        note=annotation.note,
        broken_image=annotation.broken_image,
        recorded_at=now,
        recorded_by=user,
    )


def judgment_record(
    *,
    item: Item,
    judge: str,
    judge_version: str,
    hard_refusal: bool | None,
    score: float | None = None,
    cue_label: str | None = None,
    confidence: float | None = None,
    raw_output: dict | None = None,
    error: str = "",
) -> AutomatedJudgment:
    """Store one judge's judgment of an item; running the same judge version twice keeps one row."""
    obj, _ = AutomatedJudgment.objects.update_or_create(
        item=item,
        judge=judge,
        judge_version=judge_version,
        defaults={
            "hard_refusal": hard_refusal,
            "score": score,
            "cue_label": cue_label or "",
            "confidence": confidence,
            "raw_output": raw_output or {},
            "error": error,
        },
    )
    return obj


def study_delete(*, study: Study) -> None:
    """Delete a study with everything in it and, once that commits, its image files.

    Items go first: an item PROTECTs its attribute value, so deleting the study alone raises
    ProtectedError (the study cascades to both).
    """
    names = [
        name
        for pair in Item.objects.filter(study=study).values_list("image", "source_image")
        for name in pair
        if name
    ]
    with transaction.atomic():
        Item.objects.filter(study=study).delete()
        study.delete()
        transaction.on_commit(lambda: [default_storage.delete(name) for name in names])


# --- broken-image flags: the staff review queue (docs/annotation.md#broken-image-flags) ------


def _item_for_review(item: Item) -> tuple[Item, int]:
    """The item locked for this action, and how many of its flags are still unreviewed."""
    locked = Item.objects.select_for_update().get(pk=item.pk)
    open_flags = Annotation.objects.filter(
        assignment__item=locked, assignment__is_active=True, broken_image=True
    )
    if locked.flags_reviewed_at is not None:
        open_flags = open_flags.filter(updated_at__gt=locked.flags_reviewed_at)
    return locked, open_flags.count()


def _review_write(item: Item, action: str, user, now, **fields) -> ItemReview:
    return ItemReview.objects.create(
        item=item, action=action, acted_by=user, acted_at=now, **fields
    )


def item_flags_dismiss(*, item: Item, user, reason: str = "") -> ItemReview:
    """The image is fine: its flags so far leave the queue; the item and its answers stay."""
    with transaction.atomic():
        item, open_flags = _item_for_review(item)
        now = timezone.now()
        Item.objects.filter(pk=item.pk).update(flags_reviewed_at=now)
        return _review_write(
            item, ItemReview.Action.DISMISS, user, now, reason=reason.strip(), open_flags=open_flags
        )


def item_exclude(*, item: Item, reason: str, user) -> ItemReview:
    """Take the item out of every statistic and export row (with a reason, kept on the item).

    Its unanswered assignments are withdrawn, so nobody is asked to label it again; its answers
    and judgments stay in the database, and item_include brings them back.
    """
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError("give a reason for excluding the item")
    with transaction.atomic():
        item, open_flags = _item_for_review(item)
        if item.excluded_at is not None:
            raise ValidationError(f"item {item.item_id} is already excluded")
        now = timezone.now()
        Item.objects.filter(pk=item.pk).update(
            excluded_at=now, excluded_reason=reason[:2000], flags_reviewed_at=now
        )
        closed = Assignment.objects.filter(
            item=item, is_active=True, answered_at__isnull=True
        ).update(is_active=False)
        return _review_write(
            item,
            ItemReview.Action.EXCLUDE,
            user,
            now,
            reason=reason,
            open_flags=open_flags,
            closed_assignments=closed,
        )


def item_include(*, item: Item, user, reason: str = "") -> ItemReview:
    """Undo an exclusion: the item's answers count again (withdrawn assignments stay closed)."""
    with transaction.atomic():
        item, open_flags = _item_for_review(item)
        if item.excluded_at is None:
            raise ValidationError(f"item {item.item_id} is not excluded")
        now = timezone.now()
        Item.objects.filter(pk=item.pk).update(excluded_at=None, excluded_reason="")
        return _review_write(
            item, ItemReview.Action.INCLUDE, user, now, reason=reason.strip(), open_flags=open_flags
        )


def item_image_replace(*, item: Item, image: Path, user, reason: str = "") -> ItemReview:
    """Store a new image for the item (checked like an imported one); the flags so far are
    reviewed. The old file stays in storage and is named in the review row."""
    limits = image_limits()
    try:
        sha256 = check_image(image, limits, "image")
    except ImageInvalid as exc:
        raise ValidationError(exc.message) from None
    with image.open("rb") as handle:
        name = default_storage.save(f"studies/{item.study.slug}/{image.name}", File(handle))
    try:
        with transaction.atomic():
            item, open_flags = _item_for_review(item)
            now = timezone.now()
            previous, previous_sha = item.image.name or "", item.image_sha256
            Item.objects.filter(pk=item.pk).update(
                image=name, image_sha256=sha256, flags_reviewed_at=now
            )
            return _review_write(
                item,
                ItemReview.Action.REPLACE_IMAGE,
                user,
                now,
                reason=reason.strip(),
                open_flags=open_flags,
                previous_image=previous,
                previous_image_sha256=previous_sha,
            )
    except BaseException:
        default_storage.delete(name)
        raise


def __getattr__(name: str):
    """Imports are writes too; they live in imports.py and belong to this API. Resolved on first
    use, so importing ``annotations.imports.importers`` first (it imports this module) is no cycle."""
    if name in ("annotations_import", "items_import"):
        from . import imports

        return getattr(imports, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

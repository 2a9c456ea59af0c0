"""Writes: import a manifest, create batches, serve and answer assignments, reassign.

Each service takes keyword-only arguments and runs in one transaction; database constraints
back every uniqueness rule, so retries and concurrent requests cannot duplicate anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.db.models import Count, Max
from django.utils import timezone
from django.utils.translation import gettext_lazy

from annotations.batches import request as batch_rules
from annotations.batches.request import BatchRequest, BatchRequestInvalid, StudyFacts
from annotations.common.media import image_store
from annotations.common.study_address import StudyAddressInvalid, study_address_checked
from annotations.imports.manifest import ImageInvalid, ImageLimits, check_image
from annotations.labels import NEUTRAL, LabelError, parse_cue_label
from annotations.qualification import attempts as qualification
from annotations.qualification import rules as qualification_rules
from annotations.qualification import status as qualification_status

from . import policies
from .models import (
    Annotation,
    AnnotationHistory,
    Annotator,
    Assignment,
    AttributeValue,
    Batch,
    Item,
    ItemReview,
    Study,
)
from .selectors import consent_state, item_judge_uncertainty, items_per_attribute_value


def image_limits() -> ImageLimits:
    return ImageLimits(
        max_bytes=settings.ACRB_MAX_IMAGE_BYTES, max_pixels=settings.ACRB_MAX_IMAGE_PIXELS
    )


# --- studies and items -------------------------------------------------------------------


def study_create(*, name: str, slug: str, mode: str = "t2i", overlap_k: int = 2, **fields) -> Study:
    """A new study; an address no page could be reached at is refused (``StudyAddressInvalid``,
    a ValueError naming it) before anything is written."""
    slug = study_address_checked(slug)
    return Study.objects.create(name=name, slug=slug, mode=mode, overlap_k=overlap_k, **fields)


def study_rename(*, study: Study, slug: str) -> Study:
    """Give a study a new address (the way out for one stored under an address no page can
    open: the ``annotations.W001`` check lists them). Stored image paths keep their old folder;
    only links change. A taken address is refused."""
    slug = study_address_checked(slug)
    with transaction.atomic():
        if Study.objects.filter(slug=slug).exclude(pk=study.pk).exists():
            raise StudyAddressInvalid(f"study address {slug!r} is taken by another study")
        try:
            with transaction.atomic():
                Study.objects.filter(pk=study.pk).update(slug=slug)
        except IntegrityError:  # taken by a study made at the same moment
            raise StudyAddressInvalid(f"study address {slug!r} is taken by another study") from None
    study.slug = slug
    return study


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


def annotator_language_set(*, annotator: Annotator, language: str) -> None:
    """Save the survey language an annotator chose (one of settings.LANGUAGES; the view checks)."""
    Annotator.objects.filter(pk=annotator.pk).update(language=language)
    annotator.language = language


# --- batches -------------------------------------------------------------------------------


@dataclass(frozen=True)
class BatchPlan:
    """What ``batch_create`` would write: (item pk, annotator pk) pairs and queue positions."""

    overlap_k: int
    seed: int
    pairs: list[tuple[int, int]]
    positions: dict[tuple[int, int], int]
    gold_items: frozenset[int]
    # The design's probability of drawing each item (empty: manual pairs), and per stratum
    # how many it drew (validate-judge and budgeted samples; None otherwise).
    inclusion_probability: dict[int, float]
    per_value: dict[str, int] | None = None
    # Is the batch a probability sample of the attribute values it touches (None: no design
    # chose the items, manual pairs)? When it is not, ``inclusion_probability`` is empty, the
    # reason says why and ``cells_cut`` names the values it takes only part of
    # (docs/annotation.md, "Batches from a subset").
    probability_sample: bool | None = True
    probability_sample_reason: str = ""
    cells_cut: tuple[str, ...] = ()


def batch_request_build(
    *, study: Study, annotators: list[Annotator], created_by=None, manual_pairs=(), **options
) -> BatchRequest:
    """The one way the new-batch form, ``create_batch`` and code make a ``BatchRequest``.

    ``options`` are its fields (None, an empty field or an absent flag: the default);
    ``manual_pairs`` may be the form's text, one ``item_id,username`` per line. Raises
    ``BatchRequestInvalid`` with every problem at once, one line each; nothing is written."""
    problems: list[str] = []
    if isinstance(manual_pairs, str):
        manual_pairs, problems = _manual_pairs_parse(study, manual_pairs)
    request = BatchRequest.from_options(
        study_id=study.pk,
        annotator_ids=[a.pk for a in annotators],
        created_by_id=getattr(created_by, "pk", None),
        manual_pairs=manual_pairs,
        **options,
    )
    problems += batch_request_problems(request=request, study=study)
    if problems:
        raise BatchRequestInvalid(problems)
    return request


def batch_request_problems(*, request: BatchRequest, study: Study | None = None) -> list[str]:
    """Every problem with the request, one line each (``batches.request.request_problems``,
    with what it needs read from the database)."""
    study = study or Study.objects.get(pk=request.study_id)
    qualification_asked = request.qualification_items or request.qualification_pass_mark is not None
    facts = StudyFacts(
        study_overlap_k=study.overlap_k,
        name_taken=Batch.objects.filter(study=study, name=request.name).exists(),
        annotator_groups=dict(
            Annotator.objects.filter(pk__in=request.annotator_ids).values_list("pk", "group")
        ),
        gold_available=qualification_status.gold_pool(study=study).count()
        if qualification_asked
        else 0,
        items_per_value=items_per_attribute_value(study=study, item_ids=request.item_ids)
        if request.policy == batch_rules.EXPERTISE
        else {},
    )
    return batch_rules.request_problems(request, facts)


def _manual_pairs_parse(study: Study, text: str) -> tuple[list[tuple[int, int]], list[str]]:
    """(item pk, annotator pk) pairs from lines of ``item_id,username``, and one problem per
    line that names no pair."""
    lines = [line.split(",") for line in (text or "").splitlines() if line.strip()]
    if any(len(parts) != 2 for parts in lines):
        return [], ["manual pairs: each line must be 'item_id,username'"]
    lines = [(item_id.strip(), username.strip()) for item_id, username in lines]
    items = dict(
        Item.objects.filter(study=study, item_id__in=[i for i, _ in lines]).values_list(
            "item_id", "pk"
        )
    )
    users = dict(
        Annotator.objects.filter(user__username__in=[u for _, u in lines]).values_list(
            "user__username", "pk"
        )
    )
    problems = [
        f"manual pairs: unknown item {i!r}"
        for i in dict.fromkeys(i for i, _ in lines)
        if i not in items
    ]
    problems += [
        f"manual pairs: unknown annotator {u!r}"
        for u in dict.fromkeys(u for _, u in lines)
        if u not in users
    ]
    if problems:
        return [], problems
    return [(items[i], users[u]) for i, u in lines], []


def batch_plan(*, request: BatchRequest) -> BatchPlan:
    """Run the policy without writing: the batch ``batch_create`` makes from the same request
    (and the workload preview of the new-batch page). BatchRequestInvalid (every problem) or
    PolicyError when it cannot be done.

    ``request.subset`` describes how ``request.item_ids`` were chosen (the new-batch filter, e.g.
    "judges disagree"); it names the batch's reason when the subset is not a probability sample."""
    study = Study.objects.get(pk=request.study_id)
    problems = batch_request_problems(request=request, study=study)
    if problems:
        raise BatchRequestInvalid(problems)
    annotators = list(Annotator.objects.filter(pk__in=request.annotator_ids).order_by("pk"))
    k = batch_rules.effective_k(request, study.overlap_k)
    seed = request.seed
    seed = int(np.random.SeedSequence().entropy % 2**62) if seed is None else int(seed)
    rng = np.random.default_rng(seed)
    item_ids = None if request.item_ids is None else list(request.item_ids)
    rows = Item.objects.for_annotators(study)  # harmful controls only when staff opted in
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
    budget = request.budget
    design = _sampling_design(study, request.policy, items, budget, request.min_per_value, rng)
    sample = _probability_sample(study, item_ids, items, design, request.subset)
    if design is not None:
        chosen = set(design.chosen)
        items = [i for i in items if i.item in chosen]
    try:
        pairs = _policy_pairs(request.policy, items, pool, k, rng, existing, request.manual_pairs)
    except policies.ItemPolicyError as error:  # name the item as the study does, not its id
        item_id = Item.objects.filter(pk=error.item).values_list("item_id", flat=True).first()
        raise policies.PolicyError(f"item {item_id or error.item!r}: {error.reason}") from None
    gold_per_annotator, gold_rate = request.gold_per_annotator, request.gold_rate
    gold_items = (
        list(Item.objects.filter(study=study, is_gold=True).values_list("pk", flat=True))
        if gold_per_annotator or gold_rate
        else []
    )
    if gold_per_annotator:
        pairs += policies.gold_pairs(
            gold_items, pool, gold_per_annotator, rng, existing_pairs=existing
        )
    if gold_rate:
        already = existing | set(pairs)
        pairs += policies.gold_pairs_at_rate(
            gold_items, pairs, pool, gold_rate, rng, existing_pairs=already
        )
    if request.qualification is not None:
        _check_fresh_gold(study, annotators, request.qualification, pairs)
    positions = policies.queue_positions(pairs, {i.item: i.priority for i in items}, rng)
    return BatchPlan(
        k,
        seed,
        pairs,
        positions,
        frozenset(gold_items),
        # No π that pretends the batch is a probability sample when it is not.
        design.inclusion_probability if design is not None and sample.is_one else {},
        design.per_stratum if design is not None and budget is not None else None,
        sample.is_one,
        sample.reason,
        sample.cells_cut,
    )


@dataclass(frozen=True)
class _Sample:
    is_one: bool | None
    reason: str = ""
    cells_cut: tuple[str, ...] = ()


def _probability_sample(study, item_ids, items, design, subset) -> _Sample:
    """Is the batch a probability sample of every attribute value whose items it draws?

    Its π are relative to the items it draws from; the prediction-powered rates need them
    relative to each attribute value's judged items (docs/metrics.md, "Prediction-powered
    rates"). A subset made of whole attribute values keeps them; any other subset (judges
    disagree, a generator, a domain, not yet labelled) left the rest of a value at π = 0, so
    it is not one, whatever π it would record. Decided from the items, not from the filter's
    name: a filter that happens to keep whole values is a probability sample."""
    if design is None:
        return _Sample(None)
    if item_ids is None:
        return _Sample(True)
    population = {
        pk: f"{attribute}={value}"
        for pk, attribute, value in Item.objects.for_annotators(study)
        .included()
        .values_list("pk", "attribute_value__attribute", "attribute_value__value")
    }
    cut = policies.cells_cut_by_subset([i.item for i in items], population)
    if not cut:
        return _Sample(True)
    described = subset or f"{len(items)} chosen items"
    return _Sample(False, f"a subset: {described}", tuple(cut))


def _check_fresh_gold(study, annotators, requirement, planned_pairs) -> None:
    """PolicyError, one line per annotator, unless every annotator can take a first attempt of
    the qualification round with gold items the plan does not already give them
    (docs/annotation.md#qualification-round). The round itself is checked with the request."""
    fresh = qualification_status.fresh_gold_counts(
        study=study, annotators=annotators, planned_pairs=planned_pairs
    )
    problems = qualification_rules.fresh_gold_shortfalls(requirement, fresh)
    if problems:
        raise policies.PolicyError("\n".join(problems))


def batch_create(*, request: BatchRequest, job_id: int | None = None) -> Batch:
    """Create the batch a checked request describes (all non-gold items, or its ``item_ids``).

    ``budget``: how many items humans label, drawn from those items: uniformly for k-overlap and
    expertise (every item when None), by the judges' uncertainty for validate-judge (required
    there; ``min_per_value`` per attribute value). Every assignment records the probability that
    the design drew its item (docs/annotation.md, "Validate the judge"), unless ``item_ids`` (a
    subset, described by ``subset``) take part of some attribute value's items: the batch is
    then marked not a probability sample and records no π (docs/annotation.md, "Batches from a
    subset").

    Items already assigned to an annotator are never assigned to them again: the policies
    skip existing pairs, and a unique constraint enforces it under concurrency. The seed is
    stored on the batch so the assignment can be reproduced.

    The request's qualification round, if any, is one on gold items that each annotator passes
    before the batch's items are served.

    ``job_id``: the background job making it, recorded on the batch (``Batch.job``, unique). A
    redelivered job finds the batch it already made and gets it back: nothing is made twice.
    """
    if job_id is not None:
        made = Batch.objects.filter(job_id=job_id).first()
        if made is not None:
            return made
    plan = batch_plan(request=request)
    k, seed, pairs, positions = plan.overlap_k, plan.seed, plan.pairs, plan.positions
    probability = plan.inclusion_probability
    params = {
        "annotators": list(request.annotator_ids),
        "gold_per_annotator": request.gold_per_annotator,
        "gold_rate": request.gold_rate,
    }
    if plan.per_value is not None:
        params |= {"budget": request.budget, "per_value": plan.per_value}
    try:
        with transaction.atomic():
            batch = Batch.objects.create(
                study_id=request.study_id,
                name=request.name,
                policy=request.policy,
                overlap_k=k,
                seed=seed,
                created_by_id=request.created_by_id,
                params=params,
                probability_sample=plan.probability_sample,
                probability_sample_reason=plan.probability_sample_reason,
                job_id=job_id,
                **_qualification_fields(request.qualification),
            )
            Assignment.objects.bulk_create(
                [
                    Assignment(
                        batch=batch,
                        item_id=item,
                        annotator_id=annotator,
                        position=positions[(item, annotator)],
                        inclusion_probability=probability.get(item),
                    )
                    for item, annotator in pairs
                ],
                batch_size=5000,
            )
    except IntegrityError:
        # A concurrent delivery of the same job, or a concurrent batch of the same name.
        made = Batch.objects.filter(job_id=job_id).first() if job_id is not None else None
        if made is not None:
            return made
        taken = Batch.objects.filter(study_id=request.study_id, name=request.name).exists()
        if taken:
            raise BatchRequestInvalid(batch_rules.name_problems(request.name, taken=True)) from None
        raise
    return batch


def _qualification_fields(requirement: qualification_rules.Requirement | None) -> dict:
    if requirement is None:
        return {}
    return {
        "qualification_items": requirement.items,
        "qualification_pass_mark": requirement.pass_mark,
        "qualification_attempts_allowed": requirement.attempts,
    }


def _sampling_design(study, policy, items, budget, min_per_value, rng):
    """Which of ``items`` humans label, with each one's inclusion probability; None where no
    design chooses (manual pairs)."""
    # The request's check refused a budget for manual pairs, and none for validate-judge.
    if policy == Batch.Policy.MANUAL:
        return None
    if policy != Batch.Policy.VALIDATE_JUDGE:
        return policies.uniform_design([i.item for i in items], budget, rng)
    uncertainty = item_judge_uncertainty(study=study, item_ids=[i.item for i in items])
    strata = dict(Item.objects.filter(study=study).values_list("pk", "attribute_value__attribute"))
    sample = [
        policies.SampleItem(i.item, f"{strata[i.item]}={i.match_key}", uncertainty[i.item])
        for i in items
    ]
    return policies.validate_judge_design(sample, budget, rng, min_per_stratum=min_per_value)


def _policy_pairs(policy, items, pool, k, rng, existing, manual_pairs) -> list[tuple[int, int]]:
    if policy in (Batch.Policy.K_OVERLAP, Batch.Policy.VALIDATE_JUDGE):
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
    # The new labels are of items the batch's design drew: they keep its inclusion probability.
    probability = dict(batch.assignments.values_list("item_id", "inclusion_probability"))
    start = batch.assignments.aggregate(m=Max("position"))["m"] or 0
    positions = policies.queue_positions(pairs, {}, rng)
    with transaction.atomic():
        Assignment.objects.bulk_create(
            [
                Assignment(
                    batch=batch,
                    item_id=i,
                    annotator_id=a,
                    position=start + 1 + positions[(i, a)],
                    inclusion_probability=probability.get(i),
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
            # answered_at, on the locked row itself, not a join to the answer: PostgreSQL
            # re-checks a waited-for row's own columns, so an answer committed while we waited
            # for its lock keeps the item where it was (annotation_submit locks the same row).
            # A qualification attempt's gold items are its annotator's own test: never handed on.
            Assignment.objects.select_for_update(of=("self",)).filter(
                batch=batch,
                annotator=from_annotator,
                is_active=True,
                answered_at__isnull=True,
                qualification_attempt__isnull=True,
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
                inclusion_probability=row.inclusion_probability,
            )
    return len(open_rows)


# --- the survey ----------------------------------------------------------------------------


def assignment_mark_served(*, assignment: Assignment) -> None:
    """Record the first time the item was shown; later views keep the first time."""
    if assignment.served_at is None:
        now = timezone.now()
        Assignment.objects.filter(pk=assignment.pk, served_at__isnull=True).update(served_at=now)
        assignment.served_at = now


# What the annotator reads when the item left their queue while they were answering it.
# Shown on the survey page, in the annotator's language.
NO_LONGER_YOURS = gettext_lazy("This item was handed to someone else; your answer was not saved.")


def _refuse_imported(assignment: Assignment) -> None:
    # A batch's policy never changes, so the loaded object can answer this one.
    if assignment.batch.policy == Batch.Policy.IMPORTED:
        raise ValidationError("imported labels are records and never take answers")


class ConsentPending(ValidationError):
    """The study published a consent version the annotator has not agreed to: no answer is
    taken until they do (the survey shows the consent page; docs/annotation.md)."""


CONSENT_FIRST = gettext_lazy(
    "This study's consent text has a new version: read it and agree before your next answer."
)


def _consent_version_agreed(assignment: Assignment) -> int | None:
    """The consent version this answer is given under (None: the study has no consent text);
    refused when the annotator has not agreed to the study's current version."""
    version, agreed = consent_state(
        annotator_id=assignment.annotator_id, study_id=assignment.batch.study_id
    )
    if not agreed:
        raise ConsentPending(CONSENT_FIRST)
    return version


def _refuse_locked(assignment: Assignment) -> None:
    """A batch's items are closed to an annotator who has not passed its qualification round."""
    if qualification_status.batch_item_locked(assignment=assignment):
        raise ValidationError(qualification.QUALIFICATION_FIRST)


def assignment_skip(*, assignment: Assignment) -> None:
    _refuse_imported(assignment)
    _refuse_locked(assignment)
    # The state is checked in the UPDATE itself, under the row lock it takes.
    if not Assignment.objects.filter(pk=assignment.pk, is_active=True).update(
        skipped_at=timezone.now()
    ):
        raise ValidationError(NO_LONGER_YOURS)


def assignment_decline_harmful(*, assignment: Assignment) -> None:
    """An annotator declines a harmful control (shown behind a content warning) without
    penalty: the assignment is withdrawn (inactive, kept for history), so it leaves their queue,
    their progress total and every statistic. Idempotent; an answered item stays answered, and
    only harmful items can be declined."""
    if assignment.item.intent != "harmful":
        raise ValidationError("only harmful controls can be declined; skip this item instead")
    Assignment.objects.filter(pk=assignment.pk, answered_at__isnull=True).update(is_active=False)


# What the annotator reads when they answer a harmful control whose image they never opened.
REVEAL_FIRST = gettext_lazy(
    "Open the image first (Show the image and the prompt), or decline this item."
)


def assignment_reveal(*, assignment: Assignment) -> None:
    """The annotator opened a harmful control's image and prompt behind its content warning:
    record the first time (a PUT: opening it again changes nothing). Only a harmful control's
    own open assignment can be revealed."""
    if assignment.item.intent != "harmful":
        raise ValidationError("only harmful controls are shown behind a content warning")
    if assignment.revealed_at is None:
        now = timezone.now()
        Assignment.objects.filter(pk=assignment.pk, revealed_at__isnull=True).update(
            revealed_at=now
        )
        assignment.revealed_at = now


def _refuse_unrevealed(assignment: Assignment) -> None:
    """A harmful control is answered only after its image was opened: an answer given without
    seeing it would count as a label of an image nobody looked at (docs/annotation.md, "Harmful
    controls"). Read from the database, not the loaded object, so no stale copy lets it by."""
    if assignment.item.intent != "harmful" or assignment.revealed_at is not None:
        return
    if not Assignment.objects.filter(pk=assignment.pk, revealed_at__isnull=False).exists():
        raise ValidationError(REVEAL_FIRST)


def annotation_submit(
    *,
    assignment: Assignment,
    hard_refusal: bool,
    cue_label: str | None,
    note: str = "",
    broken_image: bool = False,
    user=None,
    language: str = "",
) -> Annotation:
    """Create or edit the one answer of an assignment, writing a history row for each version.

    A resubmission identical to the stored answer (a double click, a retried request) changes
    nothing; a different answer is an edit and becomes a new revision. ``language`` is the
    language the survey was shown in (kept with each revision).

    A qualification item's answer is stored the same way; its last one finishes the attempt, and
    after that its answers are final. A batch item is refused until its annotator qualified.

    Every answer, on every path, needs the study's current consent version agreed
    (``ConsentPending`` otherwise) and records that version (``consent_version``).
    """
    try:
        cue = parse_cue_label(cue_label, hard_refusal=hard_refusal) or ""
    except LabelError as exc:
        raise ValidationError(str(exc)) from None
    note = (note or "").strip()[:5000]
    _refuse_imported(assignment)
    consent_version = _consent_version_agreed(assignment)
    _refuse_locked(assignment)
    _refuse_unrevealed(assignment)
    answer = (hard_refusal, cue, note, broken_image)
    if assignment.qualification_attempt_id is None:
        return _annotation_write(assignment, answer, user, language, consent_version)
    with transaction.atomic():
        attempt = qualification.attempt_lock_open(assignment=assignment)
        annotation = _annotation_write(assignment, answer, user, language, consent_version)
        qualification.attempt_finish_if_complete(attempt=attempt)
    return annotation


def _annotation_write(assignment, answer, user, language, consent_version) -> Annotation:
    hard_refusal, cue, note, broken_image = answer
    now = timezone.now()
    with transaction.atomic():
        existing = None
        if assignment.answered_at is not None:  # answered before: this is an edit
            existing = _answer_locked(assignment)
        if existing is None:  # a first answer, the common case: insert without a lookup
            try:
                with transaction.atomic():
                    annotation = _annotation_create(
                        assignment,
                        hard_refusal,
                        cue,
                        note,
                        broken_image,
                        now,
                        language,
                        consent_version,
                    )
            except IntegrityError:  # a concurrent request created it first: treat ours as an edit
                existing = _answer_locked(assignment)
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
        existing.language = language
        existing.consent_version = consent_version
        existing.revision += 1
        existing.updated_at = now
        existing.save()
        history_write(existing, user, now)
        return existing


def _answer_locked(assignment: Assignment) -> Annotation | None:
    """The stored answer and its assignment, both locked; refused if the assignment left the
    annotator's queue (staff only move unanswered ones, so this is a guard, not a path)."""
    existing = (
        Annotation.objects.select_for_update()
        .select_related("assignment")
        .filter(assignment=assignment)
        .first()
    )
    if existing is not None and not existing.assignment.is_active:
        raise ValidationError(NO_LONGER_YOURS)
    return existing


def _annotation_create(
    assignment, hard_refusal, cue, note, broken_image, now, language="", consent_version=None
) -> Annotation:
    served = assignment.served_at
    seconds = (now - served).total_seconds() if served else None
    minimum = assignment.batch.study.min_seconds_per_item
    # An answer to an item never served (posted without loading the page) has no time to
    # check: it is flagged like a too-fast one, never counted as a normal answer.
    too_fast = seconds is None or seconds < minimum
    # Checked where it is written: the UPDATE locks the row and (PostgreSQL) re-reads
    # is_active after waiting for staff's reassignment, so an answer never lands on an
    # assignment that left the annotator's queue while they were answering.
    if not Assignment.objects.filter(pk=assignment.pk, is_active=True).update(answered_at=now):
        raise ValidationError(NO_LONGER_YOURS)
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
        too_fast=too_fast,
        language=language,
        consent_version=consent_version,
    )


def history_write(annotation: Annotation, user, now) -> None:
    history_row(annotation, user, now).save()


def history_row(annotation: Annotation, user, now) -> AnnotationHistory:
    """The history row of ``annotation``'s current revision, unsaved (a bulk import saves many
    at once); ``history_write`` saves one."""
    return AnnotationHistory(
        annotation=annotation,
        revision=annotation.revision,
        hard_refusal=annotation.hard_refusal,
        cue_label=annotation.cue_label,
        note=annotation.note,
        broken_image=annotation.broken_image,
        language=annotation.language,
        consent_version=annotation.consent_version,
        recorded_at=now,
        recorded_by=user,
    )


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
    name = image_store(data=image.read_bytes(), folder=f"studies/{item.study.slug}")
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

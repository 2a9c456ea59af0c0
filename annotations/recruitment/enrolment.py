"""Recruitment batches, and enrolling a newly recruited annotator into a batch by its policy
(the choice itself is ``rules.enrolment_items``). See docs/annotation.md#which-items-a-recruit-gets."""

from __future__ import annotations

import numpy as np
from django.db import IntegrityError, transaction
from django.db.models import Count
from django.utils.translation import gettext_noop

from .. import policies, services
from ..batches import request as batch_rules
from ..models import Annotator, Assignment, Batch, Item, Study
from .consent import consent_current
from .rules import RecruitmentError, enrolment_items, new_secret

# Tries at a free account name before a link gives up (a random suffix never collides in practice).
NAME_TRIES = 5


def recruitment_batch_create(
    *,
    study: Study,
    name: str,
    policy: str,
    overlap_k: int,
    items_per_annotator: int | None,
    gold_per_annotator: int = 0,
    seed: int | None = None,
    request_key: str = "",
    created_by=None,
) -> Batch:
    """A batch with no annotators yet: recruits join it one by one (all non-gold items).

    A batch name is used once per study. ``request_key`` (a staff form's one-time key) makes
    the request idempotent: the same form sent again, or four times at once, gets the batch the
    first one made. The study row is locked while the name is checked and the batch written,
    so simultaneous requests take turns (PostgreSQL; SQLite writes one at a time anyway).
    """
    name = (name or "").strip()
    if not name:
        raise RecruitmentError("the batch needs a name")
    if len(request_key) > 64:
        raise RecruitmentError("the form's request key is too long: reload the page")
    if policy not in (Batch.Policy.K_OVERLAP, Batch.Policy.EXPERTISE):
        raise RecruitmentError(f"policy must be k_overlap or expertise (got {policy!r})")
    if overlap_k < 1:
        raise RecruitmentError(f"overlap k must be at least 1 (got {overlap_k})")
    if items_per_annotator is not None and items_per_annotator < 1:
        raise RecruitmentError("items per annotator must be at least 1, or empty for all")
    if gold_per_annotator < 0:
        raise RecruitmentError("gold items per annotator cannot be negative")
    if not Item.objects.filter(study=study, is_gold=False).exists():
        raise RecruitmentError(f"study {study.slug!r} has no items to label yet")
    problems = batch_rules.name_problems(name, taken=False)  # a taken name: checked under the lock
    if problems:
        raise RecruitmentError(problems[0])
    seed = int(np.random.SeedSequence().entropy % 2**62) if seed is None else int(seed)
    params = {
        "gold_per_annotator": gold_per_annotator,
        "recruitment": {"items_per_annotator": items_per_annotator},
    }
    if request_key:
        params["request_key"] = request_key
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).first()
        same_name = Batch.objects.filter(study=study, name=name).first()
        if same_name is not None:
            if request_key and (same_name.params or {}).get("request_key") == request_key:
                return same_name  # this form, sent again: the batch it already made
            raise RecruitmentError(batch_rules.name_problems(name, taken=True)[0])
        try:
            with transaction.atomic():
                return Batch.objects.create(
                    study=study,
                    name=name,
                    policy=policy,
                    overlap_k=overlap_k,
                    seed=seed,
                    created_by=created_by,
                    params=params,
                )
        except IntegrityError:  # the database's unique name, should another path race us
            raise RecruitmentError(batch_rules.name_problems(name, taken=True)[0]) from None


def recruit_annotator_create(*, username: str, group: str) -> Annotator:
    """A new annotator (no password) for a person who arrived by link, named ``username``, or
    ``username-<random>`` when an account already has that name (staff made one like it, say):
    a taken name never fails the link, nor tells a panel participant they are enrolled.

    Runs inside the caller's transaction; each try is a savepoint, so a clash leaves the
    transaction usable.
    """
    base = username[:140]
    for attempt in range(NAME_TRIES):
        name = base if attempt == 0 else f"{base}-{new_secret()[:8]}"
        try:
            with transaction.atomic():
                return services.annotator_create(username=name, group=group)
        except IntegrityError:
            continue
    raise RecruitmentError(gettext_noop("No account could be made for you just now; try again."))


def _batch_item_pool(batch: Batch):
    """A recruitment batch draws on all the study's non-gold items; any other batch on its own."""
    rows = Item.objects.for_annotators(batch.study)
    if "recruitment" not in (batch.params or {}):
        rows = rows.filter(assignments__batch=batch).distinct()
    return rows


def _reserved_groups(batch: Batch) -> set[str]:
    """Groups the batch recruits or already has: their matched items are kept for them."""
    groups = set(
        Assignment.objects.filter(batch=batch, is_active=True)
        .values_list("annotator__group", flat=True)
        .distinct()
    )
    groups |= set(batch.invite_links.values_list("group", flat=True))
    groups |= set(batch.panel_links.values_list("group", flat=True))
    return {g for g in groups if g}


def batch_enrol(*, batch: Batch, annotator: Annotator) -> int:
    """Give a newly recruited annotator their share of the batch, by the batch's policy.

    Runs inside the caller's transaction with the batch row locked, so recruits arriving at
    the same moment see each other's assignments and coverage stays balanced. Returns the
    number of assignments made; none at all is an error (nothing left for this group).
    """
    Batch.objects.select_for_update().filter(pk=batch.pk).first()
    rows = _batch_item_pool(batch).values_list("pk", "attribute_value__value", "needs_review")
    items = [policies.PolicyItem(pk, value, int(review)) for pk, value, review in rows]
    coverage = dict(
        Assignment.objects.filter(batch=batch, is_active=True)
        .values("item")
        .annotate(n=Count("id"))
        .values_list("item", "n")
    )
    own = set(Assignment.objects.filter(annotator=annotator).values_list("item_id", flat=True))
    rng = np.random.default_rng([batch.seed, annotator.pk])
    chosen = enrolment_items(
        items,
        coverage,
        policy=batch.policy,
        group=annotator.group,
        overlap_k=batch.overlap_k,
        rng=rng,
        quota=(batch.params or {}).get("recruitment", {}).get("items_per_annotator"),
        reserved_groups=_reserved_groups(batch),
        already_assigned=own,
    )
    if not chosen:
        if annotator.group:
            raise RecruitmentError(
                gettext_noop("Batch %(batch)s has no items left for group %(group)s."),
                batch=repr(batch.name),
                group=repr(annotator.group),
            )
        raise RecruitmentError(
            gettext_noop("Batch %(batch)s has no items left for this annotator."),
            batch=repr(batch.name),
        )
    pairs = [(item, annotator.pk) for item in chosen]
    gold_n = int((batch.params or {}).get("gold_per_annotator", 0))
    if gold_n:
        gold = list(
            Item.objects.filter(study_id=batch.study_id, is_gold=True).values_list("pk", flat=True)
        )
        pool = [policies.PolicyAnnotator(annotator.pk, annotator.group)]
        existing = {(item, annotator.pk) for item in own}
        pairs += policies.gold_pairs(gold, pool, gold_n, rng, existing_pairs=existing)
    priority = {i.item: i.priority for i in items}
    positions = policies.queue_positions(pairs, priority, rng)
    Assignment.objects.bulk_create(
        Assignment(batch=batch, item_id=item, annotator_id=who, position=positions[(item, who)])
        for item, who in pairs
    )
    return len(pairs)


def check_batch_takes_recruits(batch: Batch) -> None:
    if batch.policy not in (Batch.Policy.K_OVERLAP, Batch.Policy.EXPERTISE):
        raise RecruitmentError(
            f"batch {batch.name!r} uses the {batch.policy} policy; recruits need a "
            "k_overlap or expertise batch"
        )
    if consent_current(study_id=batch.study_id) is None:
        raise RecruitmentError(
            f"study {batch.study.slug!r} has no consent text yet: publish one first"
        )

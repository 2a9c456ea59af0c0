"""Assignment policies: (items, annotators, k, rng) -> (item, annotator) pairs. No ORM.

Each policy is a plain function, reproducible from the generator it is given; the batch
stores the seed. Items marked for review come first in each annotator's queue (the caller
orders positions by ``priority``). See docs/annotation.md#assignment-policies.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np


class PolicyError(ValueError):
    """The policy cannot satisfy the request (e.g. k larger than the number of annotators)."""


class ItemPolicyError(PolicyError):
    """One item cannot get its k annotators. ``item`` is the policy's key (a database id in the
    app), which the caller turns into a name a reader knows (``services.batch_create``)."""

    def __init__(self, item: Hashable, reason: str):
        self.item, self.reason = item, reason
        super().__init__(f"item {item!r}: {reason}")


def expertise_shortfalls(
    items_per_key: Mapping[str, int], annotators_per_group: Mapping[str, int], k: int
) -> list[str]:
    """Why an expertise-matched batch is impossible before it is tried: every annotator group
    that items match (their match key, e.g. the culture "Korean") needs k annotators, as
    ``expertise_matched`` sends those items to that group only. One line per short group."""
    return [
        f"group {key!r} has {annotators_per_group[key]} annotator(s) selected, but its "
        f"{items_per_key[key]} item(s) need k={k} annotators of that group"
        for key in sorted(items_per_key)
        if 0 < annotators_per_group.get(key, 0) < k
    ]


@dataclass(frozen=True)
class PolicyItem:
    item: Hashable
    match_key: str = ""  # e.g. the item's culture; matched against annotator groups
    priority: int = 0  # higher first (items flagged for human review)


@dataclass(frozen=True)
class PolicyAnnotator:
    annotator: Hashable
    group: str = ""
    load: int = 0  # open assignments the annotator already has


Pair = tuple[Hashable, Hashable]


def _pick_least_loaded(candidates, load, k, rng, taken):
    """k distinct candidates with the smallest load, ties broken at random."""
    free = [c for c in candidates if c not in taken]
    if len(free) < k:
        return None
    tie_break = rng.random(len(free))
    order = sorted(range(len(free)), key=lambda i: (load[free[i]], tie_break[i]))
    return [free[i] for i in order[:k]]


def k_overlap_balanced(
    items: Sequence[PolicyItem],
    annotators: Sequence[PolicyAnnotator],
    k: int,
    rng: np.random.Generator,
    *,
    existing_pairs: Iterable[Pair] = (),
) -> list[Pair]:
    """Each item to k distinct annotators; workloads differ by at most one assignment.

    Items are visited in random order and each goes to the k least-loaded annotators who do
    not already have it (``existing_pairs``), so the assignment is balanced and reproducible.
    """
    _check_k(k, annotators)
    load = {a.annotator: a.load for a in annotators}
    have = _pairs_by_item(existing_pairs)
    pairs: list[Pair] = []
    for index in rng.permutation(len(items)):
        item = items[index].item
        chosen = _pick_least_loaded(list(load), load, k, rng, have.get(item, set()))
        if chosen is None:
            raise ItemPolicyError(
                item, f"fewer than {k} annotators left who do not already have it"
            )
        for annotator in chosen:
            load[annotator] += 1
            pairs.append((item, annotator))
    return pairs


def expertise_matched(
    items: Sequence[PolicyItem],
    annotators: Sequence[PolicyAnnotator],
    k: int,
    rng: np.random.Generator,
    *,
    existing_pairs: Iterable[Pair] = (),
) -> list[Pair]:
    """The ACRB protocol: an item whose match key equals an annotator group goes to k
    annotators of that group; every other item goes to the k least-loaded annotators overall.

    Matched items are placed first so that the unmatched ones can even out the workloads.
    A group with fewer than k annotators is an error, not a silent fallback.
    """
    _check_k(k, annotators)
    groups: dict[str, list[Hashable]] = {}
    for a in annotators:
        if a.group:
            groups.setdefault(a.group, []).append(a.annotator)
    shortfalls = expertise_shortfalls(
        Counter(i.match_key for i in items), {g: len(m) for g, m in groups.items()}, k
    )
    if shortfalls:
        raise PolicyError("; ".join(shortfalls))
    load = {a.annotator: a.load for a in annotators}
    have = _pairs_by_item(existing_pairs)
    matched = [i for i in items if i.match_key in groups]
    unmatched = [i for i in items if i.match_key not in groups]
    pairs: list[Pair] = []
    for subset, pool_of in (
        (matched, lambda i: groups[i.match_key]),
        (unmatched, lambda i: list(load)),
    ):
        for index in rng.permutation(len(subset)):
            policy_item = subset[index]
            pool = pool_of(policy_item)
            chosen = _pick_least_loaded(pool, load, k, rng, have.get(policy_item.item, set()))
            if chosen is None:
                raise ItemPolicyError(
                    policy_item.item,
                    f"group {policy_item.match_key or 'none'}: fewer than {k} eligible "
                    "annotators who do not already have it",
                )
            for annotator in chosen:
                load[annotator] += 1
                pairs.append((policy_item.item, annotator))
    return pairs


def manual(pairs: Iterable[Pair], *, known_items: set, known_annotators: set) -> list[Pair]:
    """Staff-listed pairs, checked against the study's items and annotators; duplicates dropped."""
    out, seen = [], set()
    for item, annotator in pairs:
        if item not in known_items:
            raise PolicyError(f"unknown item {item!r}")
        if annotator not in known_annotators:
            raise PolicyError(f"unknown annotator {annotator!r}")
        if (item, annotator) not in seen:
            seen.add((item, annotator))
            out.append((item, annotator))
    return out


def queue_positions(
    pairs: Sequence[Pair], priority: dict, rng: np.random.Generator
) -> dict[Pair, int]:
    """Order each annotator's queue: review-flagged items first, the rest shuffled."""
    per_annotator: dict[Hashable, list[Hashable]] = {}
    for item, annotator in pairs:
        per_annotator.setdefault(annotator, []).append(item)
    positions: dict[Pair, int] = {}
    for annotator, queue in per_annotator.items():
        shuffle = rng.random(len(queue))
        order = sorted(range(len(queue)), key=lambda i: (-priority.get(queue[i], 0), shuffle[i]))
        for position, i in enumerate(order):
            positions[(queue[i], annotator)] = position
    return positions


def gold_pairs(
    gold_items: Sequence[Hashable],
    annotators: Sequence[PolicyAnnotator],
    per_annotator: int,
    rng,
    *,
    existing_pairs=(),
) -> list[Pair]:
    """Give every annotator ``per_annotator`` gold items they do not already have."""
    have = _pairs_by_item(existing_pairs)
    pairs = []
    for a in annotators:
        eligible = [g for g in gold_items if a.annotator not in have.get(g, set())]
        take = min(per_annotator, len(eligible))
        for index in rng.choice(len(eligible), size=take, replace=False) if take else []:
            pairs.append((eligible[index], a.annotator))
    return pairs


def gold_pairs_at_rate(
    gold_items: Sequence[Hashable],
    pairs: Sequence[Pair],
    annotators: Sequence[PolicyAnnotator],
    rate: float,
    rng: np.random.Generator,
    *,
    existing_pairs: Iterable[Pair] = (),
) -> list[Pair]:
    """Gold items so that about ``rate`` of each annotator's queue is gold.

    An annotator with n regular items gets round(rate * n / (1 - rate)) gold items (so gold is
    that share of the whole queue), drawn at random from the gold items they do not already
    have, capped by how many there are. ``queue_positions`` then shuffles them among the regular
    items, so their positions are random too (docs/annotation.md#gold-items).
    """
    if not 0.0 <= rate < 1.0:
        raise PolicyError(f"gold rate must be at least 0 and below 1 (got {rate})")
    if rate == 0.0 or not gold_items:
        return []
    regular: dict[Hashable, int] = {}
    for _, annotator in pairs:
        regular[annotator] = regular.get(annotator, 0) + 1
    have = _pairs_by_item(existing_pairs)
    out: list[Pair] = []
    for a in annotators:
        wanted = round(rate * regular.get(a.annotator, 0) / (1.0 - rate))
        eligible = [g for g in gold_items if a.annotator not in have.get(g, set())]
        take = min(wanted, len(eligible))
        if take:
            out += [
                (eligible[i], a.annotator) for i in rng.choice(len(eligible), take, replace=False)
            ]
    return out


def _check_k(k: int, annotators: Sequence[PolicyAnnotator]) -> None:
    if k < 1:
        raise PolicyError(f"overlap k must be at least 1 (got {k})")
    if k > len(annotators):
        raise PolicyError(
            f"overlap k={k} needs at least {k} annotators; {len(annotators)} selected"
        )


def _pairs_by_item(pairs: Iterable[Pair]) -> dict[Hashable, set]:
    out: dict[Hashable, set] = {}
    for item, annotator in pairs:
        out.setdefault(item, set()).add(annotator)
    return out

"""Assignment policies: (items, annotators, k, rng) -> (item, annotator) pairs. No ORM.

Each policy is a plain function, reproducible from the generator it is given; the batch
stores the seed. Items marked for review come first in each annotator's queue (the caller
orders positions by ``priority``). See docs/annotation.md#assignment-policies.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

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
    if per_annotator < 0:
        raise PolicyError(f"gold items per annotator must be 0 or more (got {per_annotator!r})")
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


def overlap_k_problems(k: int, n_annotators: int) -> list[str]:
    """Why k annotators per item cannot be drawn from ``n_annotators`` (empty: they can)."""
    if k < 1:
        return [f"overlap k must be at least 1 (got {k})"]
    if k > n_annotators:
        return [f"overlap k={k} needs at least {k} annotators; {n_annotators} selected"]
    return []


def _check_k(k: int, annotators: Sequence[PolicyAnnotator]) -> None:
    problems = overlap_k_problems(k, len(annotators))
    if problems:
        raise PolicyError(problems[0])


def _pairs_by_item(pairs: Iterable[Pair]) -> dict[Hashable, set]:
    out: dict[Hashable, set] = {}
    for item, annotator in pairs:
        out.setdefault(item, set()).add(annotator)
    return out


# --- validate the judge: sample the items whose human labels narrow the intervals most ---------
# docs/annotation.md#validate-the-judge. A design, not an assignment: it picks which items humans
# label and records each item's inclusion probability π; the batch then gives the picked items
# to k annotators with ``k_overlap_balanced``.


@dataclass(frozen=True)
class SampleItem:
    item: Hashable
    stratum: str  # the item's attribute value (e.g. "gender=female"): every stratum gets a minimum
    uncertainty: float = (
        1.0  # the judges' uncertainty on the item, ≥ 0 (1 − confidence, disagreement)
    )


@dataclass(frozen=True)
class SampleDesign:
    """The drawn items and every item's first-order inclusion probability π (sums to budget)."""

    chosen: list[Hashable]
    inclusion_probability: dict[Hashable, float]
    per_stratum: dict[str, int]  # how many items each stratum got (≥ its minimum)
    expected_per_stratum: dict[str, float] = field(default_factory=dict)  # Σπ per stratum


# Every item keeps π > 0 (Horvitz–Thompson needs it): weights are uncertainty + this share of the
# mean uncertainty, so an item the judges are sure of is still drawn now and then.
UNCERTAINTY_FLOOR_SHARE = 0.1


def default_min_per_stratum(budget: int, n_strata: int) -> int:
    """Half the budget spread evenly over the strata; the other half follows uncertainty."""
    return budget // (2 * n_strata) if n_strata else 0


def validate_judge_design(
    items: Sequence[SampleItem],
    budget: int,
    rng: np.random.Generator,
    *,
    min_per_stratum: int | None = None,
) -> SampleDesign:
    """Draw ``budget`` items with π growing with the judges' uncertainty, stratified by value.

    1. Weights w = uncertainty + 0.1 × mean uncertainty (all equal when nobody is uncertain).
    2. Expected stratum sizes t_s: π ∝ w capped at 1 over all items, raised to the stratum's
       minimum min(m, items in it) where it falls short, the rest shared again.
    3. Whole sizes: ⌊t_s⌋, one more with probability t_s − ⌊t_s⌋ (drawn systematically, so
       the sizes sum to the budget and never fall below the minimum).
    4. Within a stratum of size n_s: π_i(n_s) = min(1, c·w_i) with Σ = n_s, and randomised
       systematic PPS sampling (items in random order, one uniform start) draws exactly n_s
       items, each with probability π_i(n_s) (Madow 1949; Tillé 2006, §7.2). The recorded π_i
       averages π_i(n_s) over the two sizes, so it is each item's exact probability of being
       drawn, Σπ = budget, and the Horvitz–Thompson mean Σ y_i / π_i / N is unbiased. Zrnic & Candès (2024) motivate π ∝ uncertainty: the labels of
       items the judge is unsure of carry most of the PPI correction's variance.
    """
    n_items = len(items)
    if budget < 1:
        raise PolicyError(f"the budget must be at least 1 human-labelled item (got {budget})")
    if budget > n_items:
        raise PolicyError(f"budget {budget} is larger than the {n_items} items to draw from")
    uncertainty = np.array([float(i.uncertainty) for i in items], dtype=float)
    if not np.all(np.isfinite(uncertainty)) or np.any(uncertainty < 0):
        raise PolicyError("every uncertainty must be a finite number ≥ 0")
    strata = sorted({i.stratum for i in items})
    if min_per_stratum is None:
        min_per_stratum = default_min_per_stratum(budget, len(strata))
    if min_per_stratum < 0:
        raise PolicyError(
            f"the minimum per attribute value must be 0 or more (got {min_per_stratum})"
        )
    positions: dict[str, list[int]] = {s: [] for s in strata}
    for k, i in enumerate(items):
        positions[i.stratum].append(k)
    members = {s: np.array(positions[s]) for s in strata}
    minimum = {s: min(min_per_stratum, len(members[s])) for s in strata}
    if sum(minimum.values()) > budget:
        raise PolicyError(
            f"budget {budget} cannot give each of the {len(strata)} attribute values its minimum "
            f"of {min_per_stratum} items (needs {sum(minimum.values())})"
        )
    mean = float(uncertainty.mean())
    # A mean too small to divide by (subnormal uncertainties) counts as nobody being uncertain.
    weights = uncertainty + (UNCERTAINTY_FLOOR_SHARE * mean if mean > 1e-12 else 1.0)
    expected = _stratum_shares(weights, members, minimum, budget)
    # Whole stratum sizes: ⌊t_s⌋, plus one for strata drawn with probability t_s − ⌊t_s⌋ (the
    # fractions sum to a whole number; systematic sampling draws exactly that many).
    floor = {s: int(np.floor(expected[s] + 1e-9)) for s in strata}
    fraction = np.array([max(expected[s] - floor[s], 0.0) for s in strata])
    plus_one = {strata[k] for k in _systematic_sample(fraction, rng)}
    sizes = {s: floor[s] + (s in plus_one) for s in strata}
    probability = np.zeros(n_items)
    chosen: list[Hashable] = []
    for position, s in enumerate(strata):
        index = members[s]
        # π_i = P(size ⌊t_s⌋)·π_i(⌊t_s⌋) + P(size ⌊t_s⌋ + 1)·π_i(⌊t_s⌋ + 1): exact, and Σ = t_s.
        low = capped_proportional(weights[index], floor[s])
        high = capped_proportional(weights[index], min(floor[s] + 1, len(index)))
        share = fraction[position]
        probability[index] = (1 - share) * low + share * high
        conditional = high if s in plus_one else low
        for k in _systematic_sample(conditional, rng):
            chosen.append(items[index[k]].item)
    return SampleDesign(
        chosen=chosen,
        inclusion_probability={i.item: float(p) for i, p in zip(items, probability, strict=True)},
        per_stratum=sizes,
        expected_per_stratum=expected,
    )


def capped_proportional(weights: np.ndarray, total: float) -> np.ndarray:
    """π_i = min(1, c·w_i) with Σπ = ``total`` (≤ len(weights)); w > 0."""
    weights = np.asarray(weights, dtype=float)
    probability = np.zeros(len(weights))
    if total <= 0:
        return probability
    capped = np.zeros(len(weights), dtype=bool)
    # Each round caps at least one more item, so this ends within len(weights) rounds.
    for _ in range(len(weights) + 1):
        free = ~capped
        if not free.any() or total - capped.sum() <= 0:
            probability[capped] = 1.0
            return probability
        scale = (total - capped.sum()) / weights[free].sum()
        over = free & (scale * weights >= 1.0)
        if not over.any():
            probability[free] = scale * weights[free]
            probability[capped] = 1.0
            return np.minimum(probability, 1.0)
        capped |= over
    return np.ones(len(weights))


def _stratum_shares(weights, members, minimum, budget) -> dict[str, float]:
    """Expected stratum sizes t_s (Σ = budget): π ∝ w over the strata not yet held at their
    minimum, each stratum whose share falls short held at its minimum, until none falls short."""
    held: dict[str, float] = {}
    while True:
        free = [s for s in members if s not in held]
        if not free:
            return held
        index = np.concatenate([members[s] for s in free])
        probability = capped_proportional(weights[index], budget - sum(held.values()))
        share, start = {}, 0
        for s in free:
            share[s] = float(probability[start : start + len(members[s])].sum())
            start += len(members[s])
        short = [s for s in free if share[s] < minimum[s] - 1e-9]
        if not short:
            return held | share
        held.update({s: float(minimum[s]) for s in short})


def _systematic_sample(probability: np.ndarray, rng: np.random.Generator) -> list[int]:
    """Randomised systematic sampling: exactly Σπ (a whole number) indices, index i with
    probability π_i."""
    order = rng.permutation(len(probability))
    cumulative = np.concatenate([[0.0], np.cumsum(probability[order])])
    start = rng.random()
    picked = []
    for k in range(int(round(cumulative[-1]))):
        point = start + k
        position = int(np.searchsorted(cumulative, point, side="right")) - 1
        picked.append(int(order[min(position, len(order) - 1)]))
    return picked


def judge_uncertainty(verdicts: Sequence[tuple[str, float | None]]) -> float:
    """How unsure the judges are of one item, in [0, 1], from its (label, confidence) verdicts.

    The larger of the mean 1 − confidence (over verdicts that state one) and the judges'
    disagreement, 1 − the share of the most common label (with two judges or more). An item no
    judge labelled is maximally uncertain (1); judges that state no confidence and agree, 0.
    """
    if not verdicts:
        return 1.0
    stated = [1.0 - min(max(float(c), 0.0), 1.0) for _, c in verdicts if c is not None]
    from_confidence = sum(stated) / len(stated) if stated else 0.0
    labels = [label for label, _ in verdicts]
    modal = max(labels.count(label) for label in set(labels))
    disagreement = 1.0 - modal / len(labels) if len(labels) > 1 else 0.0
    return max(from_confidence, disagreement)


def uniform_design(
    items: Sequence[Hashable], budget: int | None, rng: np.random.Generator
) -> SampleDesign:
    """A simple random sample of ``budget`` items (every item when ``budget`` is None): π = n / N."""
    n_items = len(items)
    if budget is None or budget == n_items:
        return SampleDesign(list(items), {item: 1.0 for item in items}, {})
    if not 1 <= budget <= n_items:
        raise PolicyError(f"the budget must be between 1 and the {n_items} items (got {budget})")
    picked = rng.choice(n_items, size=budget, replace=False)
    return SampleDesign(
        [items[i] for i in sorted(picked)], {item: budget / n_items for item in items}, {}
    )


# --- is a batch a probability sample of the cells the estimates use? ---------------------------
# docs/annotation.md, "Batches from a subset". The prediction-powered rates estimate one rate per
# attribute value (a cell) over every judged item of it; a design's π is the chance of drawing an
# item *of that cell*. A batch drawn from a subset that takes part of a cell gave the rest of the
# cell π = 0, so no π it could record makes its labels a probability sample of the cell.


def cells_cut_by_subset(
    subset: Iterable[Hashable], population_cells: Mapping[Hashable, str]
) -> list[str]:
    """The cells (e.g. ``culture=Korean``) of which ``subset`` holds some items but not all.

    ``population_cells``: every item a batch without a subset could draw -> its cell. Items of
    ``subset`` outside that population are ignored (they enter no estimate). An empty list means
    the subset is a union of whole cells, so a design's π within it is the π within each cell.
    """
    population = Counter(population_cells.values())
    taken = Counter(population_cells[i] for i in set(subset) if i in population_cells)
    return sorted(cell for cell, n in taken.items() if n < population[cell])

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotations import policies
from annotations.policies import PolicyAnnotator, PolicyError, PolicyItem


def _items(n, keys=("Korean", "Nigerian", "US", "other")):
    return [PolicyItem(i, keys[i % len(keys)]) for i in range(n)]


def _annotators(groups):
    return [PolicyAnnotator(f"a{i}", g) for i, g in enumerate(groups)]


def test_k_overlap_gives_each_item_k_distinct_annotators_and_even_loads():
    pairs = policies.k_overlap_balanced(
        _items(101), _annotators([""] * 7), 3, np.random.default_rng(0)
    )
    per_item = Counter(item for item, _ in pairs)
    assert set(per_item.values()) == {3}
    assert len(set(pairs)) == len(pairs)
    loads = Counter(a for _, a in pairs)
    assert max(loads.values()) - min(loads.values()) <= 1


def test_k_overlap_is_reproducible_from_the_seed_and_differs_across_seeds():
    def run(seed):
        return policies.k_overlap_balanced(
            _items(40), _annotators([""] * 5), 2, np.random.default_rng(seed)
        )

    assert run(3) == run(3)
    assert run(3) != run(4)


def test_k_overlap_never_repeats_an_existing_pair():
    annotators = _annotators([""] * 3)
    existing = {(0, "a0"), (0, "a1")}
    pairs = policies.k_overlap_balanced(
        _items(1), annotators, 1, np.random.default_rng(0), existing_pairs=existing
    )
    assert pairs == [(0, "a2")]
    with pytest.raises(PolicyError, match="fewer than 2 annotators"):
        policies.k_overlap_balanced(
            _items(1), annotators, 2, np.random.default_rng(0), existing_pairs=existing
        )


def test_k_larger_than_annotators_is_a_clear_error():
    with pytest.raises(PolicyError, match="needs at least 3 annotators"):
        policies.k_overlap_balanced(_items(3), _annotators(["", ""]), 3, np.random.default_rng(0))
    with pytest.raises(PolicyError, match="at least 1"):
        policies.k_overlap_balanced(_items(3), _annotators(["", ""]), 0, np.random.default_rng(0))


def test_expertise_matched_sends_matched_items_to_their_group_only():
    annotators = _annotators(["Korean", "Korean", "Nigerian", "Nigerian", "US", "US", ""])
    groups = {a.annotator: a.group for a in annotators}
    items = _items(80)
    pairs = policies.expertise_matched(items, annotators, 2, np.random.default_rng(1))
    keys = {i.item: i.match_key for i in items}
    for item, annotator in pairs:
        if keys[item] in ("Korean", "Nigerian", "US"):
            assert groups[annotator] == keys[item]
    assert set(Counter(item for item, _ in pairs).values()) == {2}
    loads = Counter(a for _, a in pairs)
    # 60 matched items x2 fall on their group's two annotators; 20 others x2 even out the rest.
    assert loads["a6"] == 40 or max(loads.values()) - min(loads.values()) <= 40


def test_expertise_group_smaller_than_k_is_an_error():
    with pytest.raises(PolicyError, match="group 'Korean' has 1 annotator"):
        policies.expertise_matched(
            [PolicyItem(1, "Korean")], _annotators(["Korean", "US"]), 2, np.random.default_rng(0)
        )


def test_manual_checks_names_and_drops_duplicates():
    pairs = policies.manual(
        [(1, "a"), (1, "a"), (2, "b")], known_items={1, 2}, known_annotators={"a", "b"}
    )
    assert pairs == [(1, "a"), (2, "b")]
    with pytest.raises(PolicyError, match="unknown item 3"):
        policies.manual([(3, "a")], known_items={1}, known_annotators={"a"})
    with pytest.raises(PolicyError, match="unknown annotator 'z'"):
        policies.manual([(1, "z")], known_items={1}, known_annotators={"a"})


def test_queue_positions_put_review_items_first():
    pairs = [(i, "a") for i in range(10)]
    positions = policies.queue_positions(pairs, {7: 1, 3: 1}, np.random.default_rng(0))
    first_two = sorted(pairs, key=positions.get)[:2]
    assert {item for item, _ in first_two} == {3, 7}
    assert sorted(positions.values()) == list(range(10))


def test_gold_pairs_gives_each_annotator_distinct_gold_items():
    pairs = policies.gold_pairs(
        ["g1", "g2", "g3"], _annotators(["", ""]), 2, np.random.default_rng(0)
    )
    per = Counter(a for _, a in pairs)
    assert per == {"a0": 2, "a1": 2}
    assert len(set(pairs)) == 4


@settings(max_examples=60, deadline=None)
@given(
    n_items=st.integers(0, 60),
    n_annotators=st.integers(1, 9),
    k=st.integers(1, 9),
    seed=st.integers(0, 2**32 - 1),
)
def test_k_overlap_properties(n_items, n_annotators, k, seed):
    annotators = _annotators([""] * n_annotators)
    if k > n_annotators:
        with pytest.raises(PolicyError):
            policies.k_overlap_balanced(_items(n_items), annotators, k, np.random.default_rng(seed))
        return
    pairs = policies.k_overlap_balanced(_items(n_items), annotators, k, np.random.default_rng(seed))
    assert len(pairs) == n_items * k == len(set(pairs))
    loads = Counter(a for _, a in pairs)
    counts = [loads.get(a.annotator, 0) for a in annotators]
    assert max(counts) - min(counts) <= 1


def test_gold_at_rate_is_that_share_of_each_queue_at_random_positions():
    annotators = _annotators(["", ""])
    regular = [(i, a.annotator) for i in range(95) for a in annotators]
    gold = [f"g{i}" for i in range(20)]

    def run(seed):
        rng = np.random.default_rng(seed)
        extra = policies.gold_pairs_at_rate(gold, regular, annotators, 0.05, rng)
        return extra, policies.queue_positions(regular + extra, {}, rng)

    extra, positions = run(4)
    per = Counter(a for _, a in extra)
    assert per == {"a0": 5, "a1": 5}  # 5 of 100 = 0.05 of each queue
    assert len(set(extra)) == 10
    assert run(4) == (extra, positions)  # reproducible from the seed
    gold_positions = sorted(positions[p] for p in extra if p[1] == "a0")
    assert gold_positions != list(range(95, 100))  # not appended at the end
    # Over many seeds every position is equally likely for a gold item (mean near the middle).
    means = [np.mean([run(seed)[1][p] for p in run(seed)[0]]) for seed in range(40)]
    assert abs(np.mean(means) - 49.5) < 5


def test_gold_rate_is_checked_and_capped():
    annotators = _annotators([""])
    with pytest.raises(PolicyError, match="gold rate"):
        policies.gold_pairs_at_rate(["g"], [], annotators, 1.0, np.random.default_rng(0))
    pairs = [(i, "a0") for i in range(90)]
    taken = policies.gold_pairs_at_rate(
        ["g1", "g2"],
        pairs,
        annotators,
        0.1,
        np.random.default_rng(0),
        existing_pairs=[("g1", "a0")],
    )
    assert taken == [("g2", "a0")]


def test_cells_cut_by_subset_names_the_values_a_subset_takes_only_part_of():
    population = {1: "culture=Korean", 2: "culture=Korean", 3: "culture=US", 4: "culture=US"}
    assert policies.cells_cut_by_subset([1, 2], population) == []  # one whole value
    assert policies.cells_cut_by_subset([1, 2, 3, 4], population) == []
    assert policies.cells_cut_by_subset([1, 3, 4], population) == ["culture=Korean"]
    assert policies.cells_cut_by_subset([1, 3], population) == ["culture=Korean", "culture=US"]
    # An item outside the population (gold, excluded) enters no estimate: ignored.
    assert policies.cells_cut_by_subset([1, 2, 99], population) == []

"""Many-rater agreement against statsmodels, krippendorff, scikit-learn and hand-worked examples."""

import itertools

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from scoring.stats.agreement_multirater import (
    fleiss_kappa,
    fleiss_kappa_modal,
    gwet_ac1,
    item_label_counts,
    pairwise_cohen_kappa,
    percent_agreement_items,
    rating_matrix,
)
from scoring.stats.krippendorff_alpha import krippendorff_alpha

LABELS = ["retained", "erased", "substituted"]


def random_ratings(seed, *, n_items=60, n_raters=6, keep=0.6, labels=LABELS):
    rng = np.random.default_rng(seed)
    items, raters, values = [], [], []
    for item in range(n_items):
        truth = rng.integers(len(labels))
        for rater in range(n_raters):
            if rng.random() < keep:
                label = truth if rng.random() < 0.7 else rng.integers(len(labels))
                items.append(f"item-{item}")
                raters.append(f"rater-{rater}")
                values.append(labels[label])
    return np.array(items), np.array(raters), np.array(values)


def test_percent_agreement_hand_worked():
    # Item 1: three ratings a, a, b -> 1 agreeing pair of 3; item 2: a, a -> 1 of 1; item 3: one rating, skipped.
    _, counts, _ = item_label_counts(
        ["1", "1", "1", "2", "2", "3"], list("aabaaa"), categories=["a", "b"]
    )
    stat = percent_agreement_items(counts)
    assert stat.value == pytest.approx((1 / 3 + 1) / 2) and stat.n == 2


@pytest.mark.parametrize("seed", range(4))
def test_fleiss_matches_statsmodels(seed):
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(4, [0.6, 0.3, 0.1], size=40)
    assert fleiss_kappa(counts).value == pytest.approx(statsmodels_fleiss_kappa(counts))


def test_fleiss_modal_uses_most_common_count():
    counts = np.array([[2, 0], [1, 1], [0, 2], [3, 0], [1, 0]])
    stat = fleiss_kappa_modal(counts)
    assert stat.n == 3 and stat.extra["ratings_per_item"] == 2
    assert stat.value == pytest.approx(statsmodels_fleiss_kappa(counts[:3]))


def test_gwet_ac1_hand_worked_two_by_two():
    # Two raters, 125 items: both yes 118, yes/no 5, no/yes 2, both no 0 (kappa's "paradox" case).
    # p_a = 118/125 = 0.944; pi_yes = (123 + 120) / 250 = 0.972; p_e = 2 * 0.972 * 0.028 = 0.054432
    # AC1 = (0.944 - 0.054432) / (1 - 0.054432) = 0.940781...
    counts = np.array([[2, 0]] * 118 + [[1, 1]] * 7)
    stat = gwet_ac1(counts, n_categories=2)
    assert stat.extra["p_expected"] == pytest.approx(0.054432)
    assert stat.value == pytest.approx((0.944 - 0.054432) / (1 - 0.054432))
    assert round(stat.value, 4) == 0.9408


def test_gwet_needs_two_categories_and_pairable_items():
    assert gwet_ac1(np.array([[2]]), n_categories=1).value is None
    assert gwet_ac1(np.array([[1, 0]]), n_categories=2).value is None


@pytest.mark.parametrize("seed", range(3))
def test_pairwise_kappa_matches_sklearn_per_pair(seed):
    items, raters, values = random_ratings(seed)
    stat = pairwise_cohen_kappa(items, raters, values, categories=LABELS, min_items=10)
    rater_ids, item_ids, matrix, _ = rating_matrix(items, raters, values, categories=LABELS)
    expected = []
    for a, b in itertools.combinations(range(len(rater_ids)), 2):
        shared = (matrix[a] >= 0) & (matrix[b] >= 0)
        if shared.sum() >= 10:
            expected.append(cohen_kappa_score(matrix[a, shared], matrix[b, shared]))
    assert len(stat.extra["pairs"]) == len(expected)
    assert [p["kappa"] for p in stat.extra["pairs"]] == pytest.approx(expected)
    assert stat.value == pytest.approx(np.mean(expected))


def test_pairwise_kappa_without_qualifying_pairs_is_undefined():
    stat = pairwise_cohen_kappa(["1", "1"], ["a", "b"], ["x", "y"], min_items=10)
    assert stat.value is None and "at least 10" in stat.reason


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
@pytest.mark.parametrize("seed", range(3))
def test_krippendorff_matches_package_and_coincidence_path(level, seed):
    categories = [1, 2, 3, 4]
    items, raters, values = random_ratings(seed, labels=categories)
    stat = krippendorff_alpha(
        items, raters, values, level=level, categories=categories, n_resamples=200
    )
    rater_ids, item_ids, matrix, _ = rating_matrix(items, raters, values, categories=categories)
    data = np.where(matrix >= 0, matrix + 1.0, np.nan)
    expected = krippendorff.alpha(
        reliability_data=data, level_of_measurement=level, value_domain=categories
    )
    assert stat.value == pytest.approx(expected)
    assert stat.ci_low <= stat.value <= stat.ci_high


def test_krippendorff_bootstrap_is_reproducible():
    items, raters, values = random_ratings(11)
    first = krippendorff_alpha(items, raters, values, n_resamples=300, seed=5)
    second = krippendorff_alpha(items, raters, values, n_resamples=300, seed=5)
    assert (first.ci_low, first.ci_high) == (second.ci_low, second.ci_high)


def test_krippendorff_undefined_cases():
    assert "nothing is pairable" in krippendorff_alpha(["1", "2"], ["a", "a"], ["x", "y"]).reason
    assert "only one label" in krippendorff_alpha(["1", "1"], ["a", "b"], ["x", "x"]).reason
    with pytest.raises(ValueError):
        krippendorff_alpha(["1"], ["a"], ["x"], level="ratio-ish")


ratings = st.lists(
    st.tuples(st.integers(0, 7), st.integers(0, 4), st.sampled_from(LABELS)),
    min_size=2,
    max_size=50,
)


@settings(max_examples=60, deadline=None)
@given(ratings)
def test_multirater_statistics_are_bounded_or_undefined(rows):
    items, raters, values = (np.array(column) for column in zip(*rows, strict=True))
    _, counts, _ = item_label_counts(items, values, categories=LABELS)
    for stat in (
        percent_agreement_items(counts),
        gwet_ac1(counts, n_categories=3),
        fleiss_kappa_modal(counts),
    ):
        assert stat.value is None or -1.0 - 1e-9 <= stat.value <= 1.0 + 1e-9
    alpha = krippendorff_alpha(items, raters, values, categories=LABELS)
    assert alpha.value is None or alpha.value <= 1.0 + 1e-9


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from(LABELS), min_size=3, max_size=30).filter(lambda x: len(set(x)) >= 2)
)
def test_identical_raters_agree_perfectly(labels):
    items = [str(i) for i in range(len(labels))] * 3
    raters = sorted(["a", "b", "c"] * len(labels))
    values = labels * 3
    _, counts, _ = item_label_counts(items, values, categories=LABELS)
    assert fleiss_kappa_modal(counts).value == pytest.approx(1.0)
    assert krippendorff_alpha(items, raters, values, categories=LABELS).value == pytest.approx(1.0)
    assert gwet_ac1(counts, n_categories=3).value == pytest.approx(1.0)
    assert pairwise_cohen_kappa(items, raters, values, min_items=3).value == pytest.approx(1.0)


# Published worked examples (docs/metrics.md, "Inter-annotator agreement").

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", example C: 4 observers,
# 12 units, values 1–5 with missing ratings. The same data is irrCAC's ``cac.raw4raters``
# (Gwet, Handbook of Inter-Rater Reliability, 4th ed.). Rows are units, columns observers.
_ = None
FOUR_OBSERVERS_TWELVE_UNITS = [
    [1, 1, _, 1],
    [2, 2, 3, 2],
    [3, 3, 3, 3],
    [3, 3, 3, 3],
    [2, 2, 2, 2],
    [1, 2, 3, 4],
    [4, 4, 4, 4],
    [1, 1, 2, 1],
    [2, 2, 2, 2],
    [_, 5, 5, 5],
    [_, _, 1, 1],
    [_, _, 3, _],
]
FIVE_VALUES = [1, 2, 3, 4, 5]


def long_format(units):
    cells = [
        (f"unit-{u}", f"observer-{o}", value)
        for u, row in enumerate(units)
        for o, value in enumerate(row)
        if value is not None
    ]
    return (np.array(column, dtype=object) for column in zip(*cells, strict=True))


def test_gwet_ac1_handbook_example_with_missing_ratings():
    # irrCAC gwet.ac1.raw(cac.raw4raters): pa = 0.818182, pe = 0.190321, AC1 = 0.77544.
    # The category shares average over every unit with ≥ 1 rating (unit 12 has one).
    items, _, values = long_format(FOUR_OBSERVERS_TWELVE_UNITS)
    _, counts, _ = item_label_counts(items, values, categories=FIVE_VALUES)
    stat = gwet_ac1(counts, n_categories=5)
    assert round(stat.value, 5) == 0.77544
    assert round(stat.extra["p_observed"], 6) == 0.818182
    assert round(stat.extra["p_expected"], 6) == 0.190321


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_krippendorff_2011_example_c(level, published):
    items, raters, values = long_format(FOUR_OBSERVERS_TWELVE_UNITS)
    stat = krippendorff_alpha(items, raters, values, level=level, categories=FIVE_VALUES)
    assert round(stat.value, 3) == published


def test_fleiss_kappa_worked_example():
    # The worked example of Fleiss' kappa (Fleiss 1971's method; the table printed in the
    # Wikipedia article "Fleiss' kappa"): 10 subjects, 14 raters, 5 categories, κ = 0.210.
    counts = np.array(
        [
            [0, 0, 0, 0, 14],
            [0, 2, 6, 4, 2],
            [0, 0, 3, 5, 6],
            [0, 3, 9, 2, 0],
            [2, 2, 8, 1, 1],
            [7, 7, 0, 0, 0],
            [3, 2, 6, 3, 0],
            [2, 5, 3, 2, 2],
            [6, 5, 2, 1, 0],
            [0, 2, 2, 3, 7],
        ]
    )
    assert round(fleiss_kappa(counts).value, 3) == 0.210
    assert fleiss_kappa(counts).value == pytest.approx(statsmodels_fleiss_kappa(counts))


@pytest.mark.parametrize(
    ("counts", "reason"),
    [
        ([[1, 0], [0, 1], [1, 0]], "fewer than two ratings"),
        ([[2, 0], [1, 2]], "unequal numbers of ratings"),
        ([[2, 1]], "at least two items"),
        ([[3, 0], [3, 0]], "only one label"),
    ],
)
def test_fleiss_kappa_degenerate_input_is_undefined_never_raises(counts, reason):
    stat = fleiss_kappa(np.array(counts))
    assert stat.value is None and reason in stat.reason


def test_fleiss_modal_tie_goes_to_the_larger_count_and_one_item_is_not_minus_one():
    # Counts 3 and 2 occur once each: the tie picks 3, leaving one item, which is undefined
    # (before: the smaller count was picked and [1, 1] alone gave κ = −1).
    stat = fleiss_kappa_modal(np.array([[3, 0], [1, 1]]))
    assert stat.value is None and "at least two items" in stat.reason
    counts = np.array([[3, 0], [2, 1], [1, 1], [0, 2]])
    tied = fleiss_kappa_modal(counts)
    assert tied.extra["ratings_per_item"] == 3
    assert tied.value == pytest.approx(statsmodels_fleiss_kappa(counts[:2]))


def test_one_label_everywhere_gives_kappa_alpha_and_ac1_the_same_reason():
    items = ["1", "1", "2", "2", "3", "3"]
    raters = ["a", "b"] * 3
    values = ["erased"] * 6
    _, counts, _ = item_label_counts(items, values, categories=LABELS)
    stats = (
        fleiss_kappa_modal(counts),
        gwet_ac1(counts, n_categories=3),
        krippendorff_alpha(items, raters, values, categories=LABELS),
    )
    assert {stat.value for stat in stats} == {None}
    assert len({stat.reason for stat in stats}) == 1


def test_alpha_interval_reasons():
    items, raters, values = long_format(FOUR_OBSERVERS_TWELVE_UNITS)
    unrequested = krippendorff_alpha(items, raters, values, categories=FIVE_VALUES)
    assert unrequested.ci_low is None and unrequested.extra["ci_reason_code"] == "no_resamples"
    few = [row for row in FOUR_OBSERVERS_TWELVE_UNITS[:4]]  # 4 pairable items
    items, raters, values = long_format(few)
    stat = krippendorff_alpha(items, raters, values, categories=FIVE_VALUES, n_resamples=100)
    assert stat.ci_low is None and stat.extra["ci_reason_code"] == "too_few_items"

"""Two-rater agreement against scikit-learn, statsmodels and a published worked example."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score, confusion_matrix, precision_recall_fscore_support
from statsmodels.stats.inter_rater import cohens_kappa

from scoring.stats.agreement import (
    cohen_kappa,
    confusion_counts,
    confusion_matrix_dict,
    kappa_from_confusion,
    percent_agreement,
    precision_recall,
)

LABELS = ["retained", "erased", "substituted"]


def test_artstein_poesio_2008_worked_example():
    # Artstein & Poesio (2008), Computational Linguistics 34(4), Table 1: 100 utterances coded
    # Stat / IReq / Chck by two coders: A_o = 0.88, A_e = 0.396 (kappa), kappa = 0.8013.
    table = np.array([[46, 6, 0], [0, 32, 0], [0, 6, 10]])
    a, b = [], []
    for i in range(3):
        for j in range(3):
            a += [i] * table[i, j]
            b += [j] * table[i, j]
    stat = cohen_kappa(a, b)
    p_o, p_e = 0.88, (52 * 46 + 32 * 44 + 16 * 10) / 100**2
    assert stat.extra["p_observed"] == pytest.approx(p_o)
    assert stat.extra["p_expected"] == pytest.approx(p_e)
    assert stat.value == pytest.approx((p_o - p_e) / (1 - p_e))
    assert stat.value == pytest.approx(0.8013, abs=1e-4)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize("seed", range(5))
def test_kappa_matches_sklearn_and_statsmodels_standard_error(weights, seed):
    rng = np.random.default_rng(seed)
    a = rng.choice(LABELS, size=200)
    b = np.where(rng.random(200) < 0.6, a, rng.choice(LABELS, size=200))
    stat = cohen_kappa(a, b, labels=LABELS, weights=weights)
    assert stat.value == pytest.approx(cohen_kappa_score(a, b, labels=LABELS, weights=weights))
    table = confusion_matrix(a, b, labels=LABELS)
    reference = cohens_kappa(table, wt=weights) if weights else cohens_kappa(table)
    assert stat.extra["standard_error"] == pytest.approx(reference.std_kappa)
    assert stat.ci_low == pytest.approx(reference.kappa_low)


def test_confusion_and_precision_recall_match_sklearn():
    rng = np.random.default_rng(7)
    truth = rng.choice(LABELS, size=300)
    predicted = np.where(rng.random(300) < 0.7, truth, rng.choice(LABELS, size=300))
    matrix, _ = confusion_counts(truth, predicted, labels=LABELS)
    np.testing.assert_array_equal(matrix, confusion_matrix(truth, predicted, labels=LABELS))
    assert confusion_matrix_dict(truth, predicted, labels=LABELS)["matrix"] == matrix.tolist()
    precision, recall, f1, support = precision_recall_fscore_support(
        truth, predicted, labels=LABELS
    )
    ours = precision_recall(truth, predicted, labels=LABELS)
    for i, label in enumerate(LABELS):
        assert ours[label]["precision"] == pytest.approx(precision[i])
        assert ours[label]["recall"] == pytest.approx(recall[i])
        assert ours[label]["f1"] == pytest.approx(f1[i])
        assert ours[label]["support"] == support[i]


def test_precision_of_never_predicted_class_is_undefined():
    out = precision_recall(["a", "b"], ["a", "a"], labels=["a", "b"])
    assert out["b"]["precision"] is None and out["b"]["precision_reason"]
    assert out["b"]["recall"] == 0.0


def test_single_shared_label_makes_kappa_undefined_not_nan():
    stat = cohen_kappa(["true"] * 5, ["true"] * 5, labels=["false", "true"])
    assert stat.value is None and "chance agreement is 1" in stat.reason
    assert percent_agreement(["true"] * 5, ["true"] * 5).value == 1.0


def test_empty_input_is_undefined():
    assert cohen_kappa([], []).value is None
    assert percent_agreement([], []).value is None
    assert kappa_from_confusion(np.zeros((2, 2))).reason == "no paired ratings"


def test_unknown_weighting_rejected():
    with pytest.raises(ValueError):
        cohen_kappa(["a"], ["a"], weights="cubic")


label_pairs = st.lists(
    st.tuples(st.sampled_from(LABELS), st.sampled_from(LABELS)), min_size=1, max_size=60
)


@given(label_pairs)
def test_kappa_bounded_and_symmetric(pairs):
    a, b = zip(*pairs, strict=True)
    forward, backward = cohen_kappa(a, b, labels=LABELS), cohen_kappa(b, a, labels=LABELS)
    assert forward.value == backward.value or forward.value == pytest.approx(backward.value)
    if forward.defined:
        assert -1.0 <= forward.value <= 1.0
        if forward.ci_low is None:  # zero standard error: no interval, with its reason
            assert forward.extra["ci_reason_code"] == "zero_width"
        else:
            assert -1.0 <= forward.ci_low <= forward.value <= forward.ci_high <= 1.0


@given(label_pairs)
def test_kappa_invariant_under_relabelling(pairs):
    a, b = zip(*pairs, strict=True)
    rename = {"retained": "x", "erased": "y", "substituted": "z"}
    original = cohen_kappa(a, b, labels=LABELS)
    renamed = cohen_kappa([rename[x] for x in a], [rename[x] for x in b], labels=["z", "x", "y"])
    assert original.value == renamed.value or original.value == pytest.approx(renamed.value)


@given(
    st.lists(st.sampled_from(LABELS), min_size=2, max_size=60).filter(lambda x: len(set(x)) >= 2)
)
def test_identical_raters_have_kappa_one(labels):
    assert cohen_kappa(labels, labels).value == pytest.approx(1.0)
    assert cohen_kappa(labels, labels, labels=LABELS, weights="quadratic").value == pytest.approx(
        1.0
    )


def test_zero_standard_error_gives_no_interval_but_a_reason():
    stat = cohen_kappa(["a", "b", "a", "b"], ["a", "b", "a", "b"])
    assert stat.value == pytest.approx(1.0)
    assert stat.ci_low is None and stat.ci_high is None
    assert stat.extra["ci_reason_code"] == "zero_width"

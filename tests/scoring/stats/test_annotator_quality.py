"""Annotator quality statistics against independent references (scikit-learn, statsmodels)."""

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.proportion import proportion_confint

from scoring.stats.annotator_quality import (
    annotator_quality,
    answer_distribution,
    answers_by_item,
    leave_one_out_kappa,
    peers_majority,
)


def _rows(labels: dict[str, list[str]]):
    """labels: annotator -> one key per item ('refused' or a cue label; '' = no answer)."""
    rows = []
    for annotator, keys in labels.items():
        for index, key in enumerate(keys):
            if key:
                rows.append(
                    {
                        "item_id": f"i{index}",
                        "annotator": annotator,
                        "hard_refusal": key == "refused",
                        "cue": None if key == "refused" else key,
                    }
                )
    return rows


def test_leave_one_out_kappa_equals_sklearn_against_the_others_majority():
    rng = np.random.default_rng(7)
    keys = ["refused", "retained", "erased", "substituted"]
    truth = rng.choice(keys, size=60)
    labels = {
        name: [k if rng.random() > noise else rng.choice(keys) for k in truth]
        for name, noise in (("a", 0.2), ("b", 0.3), ("c", 0.3), ("d", 0.5))
    }
    rows = _rows(labels)
    stat = leave_one_out_kappa(answers_by_item(rows), "d")
    own, majority = [], []
    for index in range(60):
        others = [labels[n][index] for n in ("a", "b", "c")]
        top = peers_majority(others)
        if top is not None:
            own.append(labels["d"][index])
            majority.append(top)
    assert stat.n == len(own)
    assert stat.extra["items_peers_tied"] == 60 - len(own)
    assert stat.value == pytest.approx(cohen_kappa_score(own, majority))
    # The page's per-annotator summary computes the same number.
    full = [
        {**r, "is_gold": False, "broken_image": False, "seconds_to_answer": None, "too_fast": False}
        for r in rows
    ]
    assert annotator_quality(full)["d"]["peer_kappa"]["value"] == pytest.approx(stat.value)


def test_peers_majority_is_none_on_a_tie():
    assert peers_majority(["a", "b"]) is None
    assert peers_majority(["a", "a", "b"]) == "a"


def test_kappa_is_null_with_a_reason_without_peers():
    stat = leave_one_out_kappa(answers_by_item(_rows({"a": ["retained", "erased"]})), "a")
    assert stat.value is None and stat.reason
    assert stat.extra["items_without_peers"] == 2


def test_kappa_is_null_when_one_label_is_used():
    rows = _rows({"a": ["retained"] * 5, "b": ["retained"] * 5})
    stat = leave_one_out_kappa(answers_by_item(rows), "a")
    assert stat.value is None and "1" in stat.reason


def test_answer_distribution_flags_one_key_above_80_percent():
    assert answer_distribution(["refused"] * 9 + ["retained"] * 1)["anomaly"] is True
    assert answer_distribution(["refused"] * 8 + ["retained"] * 2)["anomaly"] is False
    few = answer_distribution(["refused"] * 3)
    assert few["anomaly"] is None and few["reason"]


def test_gold_accuracy_is_a_wilson_interval_like_statsmodels():
    rows = []
    for index in range(12):
        correct = index < 9
        rows.append(
            {
                "annotator": "a",
                "item_id": f"g{index}",
                "is_gold": True,
                "gold_hard_refusal": False,
                "gold_cue": "retained",
                "hard_refusal": False,
                "cue": "retained" if correct else "erased",
                "broken_image": index == 0,
                "seconds_to_answer": float(index + 1),
                "too_fast": index < 3,
            }
        )
    quality = annotator_quality(rows)["a"]
    low, high = proportion_confint(9, 12, method="wilson")
    assert quality["gold_accuracy"]["value"] == pytest.approx(0.75)
    assert quality["gold_accuracy"]["ci_low"] == pytest.approx(low)
    assert quality["gold_accuracy"]["ci_high"] == pytest.approx(high)
    assert quality["too_fast_share"] == pytest.approx(0.25)
    assert quality["median_seconds"] == pytest.approx(6.5)
    assert quality["broken_image_flags"] == 1
    assert quality["peer_kappa"]["value"] is None


def test_gold_correct_is_one_rule_and_an_empty_cue_is_no_cue():
    """The quality page and the gold-accuracy table (page, report, verifier) share one rule."""
    from annotations.labels import gold_accuracy_from_records, gold_correct

    base = {"annotator": "a", "hard_refusal": False, "gold_hard_refusal": False}
    assert gold_correct(base | {"cue": "", "gold_cue": None})
    assert gold_correct(base | {"cue": "erased", "gold_cue": "erased"})
    assert not gold_correct(base | {"cue": "erased", "gold_cue": "retained"})
    assert gold_correct(
        {"hard_refusal": True, "gold_hard_refusal": True, "cue": None, "gold_cue": "x"}
    )
    assert not gold_correct(base | {"hard_refusal": True, "cue": None, "gold_cue": None})
    rows = [base | {"cue": "", "gold_cue": None}, base | {"cue": "erased", "gold_cue": "retained"}]
    assert gold_accuracy_from_records(rows) == [
        {"annotator": "a", "n": 2, "correct": 1, "accuracy": 0.5}
    ]

"""The study's prediction-powered blocks (docs/metrics.md, "Prediction-powered rates", "Judge
bias"): erasure as a ratio over one population, the cross-fitted λ at small n, the judge-bias
band, and Δ withheld when a value's rate has no spread."""

import numpy as np
import pandas as pd
import pytest

from scoring.stats.ppi_judge_bias import simultaneous_band
from scoring.stats.ppi_ratio import cross_fit_lambda, ppi_ratio_fit
from scoring.stats.ppi_study import judge_items, judge_outcome_ppi
from scoring.stats.validity.ppi_scenarios import (
    ALTERNATIVE_RATES,
    _erasure_frames,
    _items,
    _simulate,
)


def test_erasure_is_a_ratio_over_every_judged_item_when_the_judge_misses_refusals():
    # Value b refuses 40 %; the judge calls half of those "not a refusal, erased". Among the
    # images that are not refusals, b erases 20 %.
    annotations, judgments = _erasure_frames(np.array([0.30, 0.20]), 600, np.random.default_rng(3))
    items = judge_items(annotations, judgments, "erasure")
    out = judge_outcome_ppi(items, confidence=0.95, n_resamples=0, seed=0)
    rate = out["rates"]["culture"]["b"]
    assert rate["ci_low"] <= 0.20 <= rate["ci_high"]
    assert abs(rate["estimate"] - 0.20) < 0.03
    # Every annotated item counts, refusals included (they enter the denominator as 0).
    assert rate["n_labelled"] == 600
    refused = annotations[annotations["attribute_value"] == "b"]["hard_refusal"]
    assert refused.sum() > 150


def test_a_refusal_item_has_the_ratio_parts_of_its_labels():
    annotations, judgments = _erasure_frames(np.array([0.3, 0.2]), 30, np.random.default_rng(1))
    items = judge_items(annotations, judgments, "erasure").set_index("item_id")
    human = annotations.set_index("item_id")
    refused = human.index[human["hard_refusal"]]
    assert (items.loc[refused, ["y_hits", "y_base"]] == 0).all().all()
    assert items.loc[refused, "y"].isna().all()  # the judge-error reference keeps its meaning


def test_the_cross_fitted_rate_is_unbiased_at_eleven_labelled_items():
    # The plug-in λ (ppi_py's) is biased about −0.024 here; the cross-fitted one is not.
    rng = np.random.default_rng(0)
    errors = []
    for _ in range(600):
        items = _items(_simulate(11, ALTERNATIVE_RATES, "non_differential", rng))
        rates = judge_outcome_ppi(items, confidence=0.95, n_resamples=0, seed=0)["rates"]
        errors += [
            rates["culture"][v]["estimate"] - r
            for v, r in zip("abcd", ALTERNATIVE_RATES, strict=True)
        ]
    assert abs(np.mean(errors)) < 0.008


def test_cross_fit_lambda_leaves_each_item_out():
    rng = np.random.default_rng(2)
    y = (rng.random(40) < 0.3).astype(float)
    f = np.where(rng.random(40) < 0.8, y, 1 - y)
    lam = cross_fit_lambda(y, f, np.ones(40), n_imputed=160)
    for i in (0, 7, 39):
        rest_y, rest_f = np.delete(y, i), np.delete(f, i)
        expected = np.cov(rest_y, rest_f)[0, 1] / ((1 + 40 / 160) * np.var(rest_f, ddof=1))
        assert lam[i] == pytest.approx(min(max(expected, 0.0), 1.0), abs=1e-12)


def test_the_ratio_with_every_label_counting_is_the_ppi_mean():
    rng = np.random.default_rng(4)
    y = (rng.random(300) < 0.3).astype(float)
    f = np.where(rng.random(300) < 0.85, y, 1 - y)
    labelled = np.arange(300) < 60
    ones = np.ones(300)
    fit = ppi_ratio_fit(y, f, ones, ones, labelled, ~labelled, lam=0.7).entry
    assert fit["estimate"] == pytest.approx(y[:60].mean() + 0.7 * (f[60:].mean() - f[:60].mean()))


def _shifted_judge_items(seed, false_positive):
    """A study whose judge adds the same false positives in every value: its Δ is about right,
    its rates are not."""
    rng = np.random.default_rng(seed)
    study = _simulate(150, ALTERNATIVE_RATES, "non_differential", rng)
    items = _items(study)
    wrong = (study.truth == 0) & (rng.random(study.truth.size) < false_positive)
    items["f"] = np.where(wrong, 1.0, study.truth)
    return items


def test_the_warning_fires_when_the_judge_shifts_every_value_alike():
    out = judge_outcome_ppi(_shifted_judge_items(1, 0.15), confidence=0.95, n_resamples=400, seed=1)
    bias = out["judge_bias"]["culture"]
    assert bias["warning"] is True
    assert abs(bias["judge_delta"] - bias["ppi_delta"]) < 0.05  # the old Δ − Δ stayed near 0
    for entry in bias["per_value"].values():
        assert entry["ci_low"] > 0
        assert entry["estimate"] == pytest.approx(entry["judge_rate"] - entry["ppi_rate"])


def test_no_warning_for_a_judge_that_is_right():
    out = judge_outcome_ppi(_shifted_judge_items(2, 0.0), confidence=0.95, n_resamples=400, seed=1)
    bias = out["judge_bias"]["culture"]
    assert bias["warning"] is False and "max-t" in bias["method"]


def test_the_band_holds_every_value_at_once():
    rng = np.random.default_rng(5)
    boot = rng.normal(size=(4000, 3)) * [0.01, 0.02, 0.03]
    low, high, n_used = simultaneous_band(np.zeros(3), boot, confidence=0.95)
    inside = np.all((boot >= low) & (boot <= high), axis=1)
    assert n_used == 4000 and inside.mean() == pytest.approx(0.95, abs=0.005)
    assert high[2] / high[0] == pytest.approx(3.0, rel=0.05)


def test_delta_is_withheld_when_a_value_has_no_spread():
    items = _items(_simulate(30, ALTERNATIVE_RATES, "non_differential", np.random.default_rng(6)))
    cell = (items["attribute_value"] == "a") & items["labelled"]
    items.loc[cell, "y"] = 0.0  # no positive human label: λ = 0 and the rate is 0 in every resample
    delta = judge_outcome_ppi(items, confidence=0.95, n_resamples=200, seed=0)["delta"]["culture"]
    assert delta["estimate"] is not None and delta["ci_low"] is None
    assert delta["ci_reason_code"] == "value_without_spread"


def test_items_without_the_ratio_columns_are_a_plain_mean():
    items = _items(_simulate(20, ALTERNATIVE_RATES, "unbiased", np.random.default_rng(7)))
    plain = judge_outcome_ppi(items, confidence=0.95, n_resamples=0, seed=0)["rates"]["culture"]
    with_columns = items.assign(
        f_hits=items["f"], f_base=1.0, y_hits=items["y"], y_base=items["y"].notna() * 1.0
    )
    ratio = judge_outcome_ppi(with_columns, confidence=0.95, n_resamples=0, seed=0)["rates"]
    assert ratio["culture"]["a"]["estimate"] == pytest.approx(plain["a"]["estimate"])
    assert isinstance(items, pd.DataFrame)


# --- labels that are not a probability sample (issue 30; docs/metrics.md, "Prediction-powered
# rates": inclusion probabilities) ---------------------------------------------------------------


def _uniform_plus_subset(seed=0):
    from scoring.stats.study_metrics import validated_frames
    from scoring.stats.validity.ppi_subset_scenarios import _frames

    annotations, judgments, subset = _frames(np.random.default_rng(seed))
    annotations, judgments = validated_frames(annotations, judgments)
    return annotations, judgments, subset


def test_study_ppi_leaves_out_the_labels_of_a_subset_batch_and_says_how_many():
    from scoring.stats.ppi_study import study_ppi

    annotations, judgments, subset = _uniform_plus_subset()
    ppi, _ = study_ppi(annotations, judgments, confidence=0.95, n_resamples=0, seed=0)
    block = ppi["judge@1"]["refusal"]
    assert block["n_labels_not_probability_sample"] == subset.sum() > 0
    (batch,) = block["not_probability_sample"]
    assert batch == {
        "batch": "disagreements",
        "reason": "a subset: judges disagree, not yet labelled",
        "n_labels": int(subset.sum()),
        "n_items": int(subset.sum()),
    }
    assert block["not_probability_sample_reason"] == (
        f"{subset.sum()} labels from batch 'disagreements' (a subset: judges disagree, not yet "
        "labelled) are left out of the prediction-powered estimates: they are not a probability "
        "sample of their cells."
    )
    # Exactly the estimate of the uniform sample alone, its items judged but unlabelled.
    alone, _ = study_ppi(annotations[~subset], judgments, confidence=0.95, n_resamples=0, seed=0)
    for value in ("a", "b"):
        ours, reference = block["rates"]["culture"][value], alone["judge@1"]["refusal"]["rates"]
        assert ours["estimate"] == pytest.approx(reference["culture"][value]["estimate"], abs=1e-12)
        assert ours["n_labelled"] == reference["culture"][value]["n_labelled"]
        assert ours["n_unlabelled"] == reference["culture"][value]["n_unlabelled"]
        assert ours["n_labelled_not_probability_sample"] > 0
    assert alone["judge@1"]["refusal"]["n_labels_not_probability_sample"] == 0
    assert alone["judge@1"]["refusal"]["not_probability_sample_reason"] is None


def test_an_item_a_probability_sample_drew_keeps_its_subset_labels_and_its_pi():
    from scoring.stats.ppi_study import not_probability_sample

    annotations, _, subset = _uniform_plus_subset()
    drawn = annotations[~subset].iloc[[0]]
    again = drawn.assign(
        annotator="second",
        batch="disagreements",
        inclusion_probability=np.nan,
        probability_sample=False,
        probability_sample_reason="a subset: judges disagree",
    )
    frame = pd.concat([annotations, again], ignore_index=True)
    left_out = not_probability_sample(frame)
    assert not left_out[-1] and left_out[: len(annotations)].tolist() == subset.tolist()


def test_a_judge_whose_labels_are_all_left_out_has_null_estimates_that_say_why():
    from scoring.stats.ppi_study import study_ppi

    annotations, judgments, subset = _uniform_plus_subset()
    ppi, errors = study_ppi(annotations[subset], judgments, confidence=0.95, n_resamples=0, seed=0)
    rate = ppi["judge@1"]["refusal"]["rates"]["culture"]["a"]
    assert rate["estimate"] is None and "left out: not a probability sample" in rate["reason"]
    assert errors["judge@1"]["refusal"]  # the judge's error by group uses every label

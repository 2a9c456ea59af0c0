"""Models side by side (scoring/stats/version_change.py) against independent references:
statsmodels' Newcombe interval and McNemar test, scipy's two-proportion tests, statsmodels'
Holm and BH, and a loop that rebuilds every resampled data set for the paired bootstrap."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chi2_contingency
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import confint_proportions_2indep

from scoring.stats.disparity import ClusterResample
from scoring.stats.study_metrics import validated_frames
from scoring.stats.synthetic_study import synthetic_study
from scoring.stats.version_change import (
    NO_SHARED_PROMPT,
    centred_bootstrap_p,
    comparison_by_source,
    mcnemar_exact_p,
    models_side_by_side,
    newcombe_interval,
    version_change,
)


def _frame(outcomes: dict, *, n_prompts: int, domains: int = 2, per_prompt: int = 1, seed=0):
    """One row per (base prompt, value, repeat): ``outcomes[value]`` is the refusal probability;
    every row carries a cue label so erasure is counted too."""
    rng = np.random.default_rng(seed)
    rows = []
    for prompt in range(n_prompts):
        for value, probability in outcomes.items():
            for repeat in range(per_prompt):
                refused = bool(rng.random() < probability)
                cue = "erased" if rng.random() < 0.3 else "retained"
                rows.append(
                    {
                        "item_id": f"{prompt}-{value}-{repeat}",
                        "attribute": "gender",
                        "attribute_value": value,
                        "base_prompt_id": f"bp-{prompt:03d}",
                        "domain": f"d{prompt % domains}",
                        "generator": "g",
                        "mode": "t2i",
                        "judge": "j",
                        "hard_refusal": refused,
                        "cue": None if refused else cue,
                    }
                )
    return validated_frames(None, pd.DataFrame(rows))[1]


def test_newcombe_interval_is_statsmodels_newcomb():
    for s_a, n_a, s_b, n_b in [(5, 40, 14, 38), (0, 20, 3, 25), (30, 30, 12, 30), (7, 9, 2, 11)]:
        low, high = newcombe_interval(s_a, n_a, s_b, n_b)
        reference = confint_proportions_2indep(s_b, n_b, s_a, n_a, method="newcomb")
        assert (low, high) == pytest.approx(reference, abs=1e-12)


def test_mcnemar_exact_is_statsmodels():
    rng = np.random.default_rng(4)
    for _ in range(20):
        a = rng.random(30) < 0.4
        b = rng.random(30) < 0.6
        table = [[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]]
        assert mcnemar_exact_p(a, b) == pytest.approx(mcnemar(table, exact=True).pvalue)
    assert mcnemar_exact_p([1, 0], [1, 0]) == 1.0


def test_centred_bootstrap_p_worked_example():
    # d = 0.1; |d* − d| ≥ 0.1 for 0.0, 0.2, 0.25 (three of five): (1 + 3) / (1 + 5).
    assert centred_bootstrap_p([0.0, 0.1, 0.15, 0.2, 0.25], 0.1) == pytest.approx(4 / 6)
    assert centred_bootstrap_p([np.nan], 0.1) is None
    assert centred_bootstrap_p([0.1, 0.3], 0.0) == 1.0


def test_paired_with_one_outcome_per_prompt_uses_mcnemar():
    a = _frame({"female": 0.2, "male": 0.2}, n_prompts=40, seed=1)
    b = _frame({"female": 0.6, "male": 0.2}, n_prompts=40, seed=2)
    change = version_change(a, b, n_resamples=200, seed=0)
    assert change["design"] == "paired" and change["n_prompts_shared"] == 80
    row = next(r for r in change["rates"] if r["measure"] == "refusal" and r["value"] == "female")
    ordered_a = a[a.attribute_value == "female"].sort_values("base_prompt_id")
    ordered_b = b[b.attribute_value == "female"].sort_values("base_prompt_id")
    assert row["test"] == "mcnemar-exact"
    assert row["p_value"] == pytest.approx(
        mcnemar_exact_p(ordered_a.hard_refusal, ordered_b.hard_refusal)
    )
    assert row["difference"] == pytest.approx(
        ordered_b.hard_refusal.mean() - ordered_a.hard_refusal.mean()
    )
    assert row["ci_low"] < row["difference"] < row["ci_high"]


def _naive_delta_change(a, b, *, n_resamples, seed, confidence=0.95):
    """Rebuild every resampled data set from the same draws and compute Δ_B − Δ_A by pandas."""
    union = pd.concat([a.assign(side="a"), b.assign(side="b")], ignore_index=True)
    resample = ClusterResample(union, n_resamples=n_resamples, rng=np.random.default_rng(seed))
    clusters = pd.Series(resample.cluster_codes)
    differences = []
    for drawn in resample.indices:
        rebuilt = pd.concat([union[clusters.to_numpy() == c] for c in drawn])
        deltas = {}
        for side, rows in rebuilt.groupby("side"):
            rates = rows.groupby("attribute_value").hard_refusal.mean()
            deltas[side] = rates.max() - rates.min()
        differences.append(deltas["b"] - deltas["a"])
    low, high = np.quantile(differences, [(1 - confidence) / 2, (1 + confidence) / 2])
    return low, high, np.asarray(differences)


def test_paired_delta_change_is_a_loop_over_rebuilt_resamples():
    a = _frame({"female": 0.3, "male": 0.1}, n_prompts=12, per_prompt=2, seed=3)
    b = _frame({"female": 0.5, "male": 0.1}, n_prompts=12, per_prompt=2, seed=4)
    change = version_change(a, b, n_resamples=150, seed=7)
    row = next(r for r in change["deltas"] if r["measure"] == "refusal")
    rates_a = a.groupby("attribute_value").hard_refusal.mean()
    rates_b = b.groupby("attribute_value").hard_refusal.mean()
    delta_a, delta_b = rates_a.max() - rates_a.min(), rates_b.max() - rates_b.min()
    assert row["difference"] == pytest.approx(delta_b - delta_a)
    low, high, samples = _naive_delta_change(a, b, n_resamples=150, seed=7)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), abs=1e-12)
    assert row["p_value"] == pytest.approx(centred_bootstrap_p(samples, delta_b - delta_a))
    # Several outcomes per prompt: the rate's test is the bootstrap, not McNemar.
    rate = next(r for r in change["rates"] if r["measure"] == "refusal")
    assert rate["test"] == "cluster-bootstrap"


def test_independent_design_uses_newcombe_and_the_two_proportion_test():
    a = _frame({"female": 0.2, "male": 0.3}, n_prompts=30, seed=5)
    b = _frame({"female": 0.5, "male": 0.3}, n_prompts=40, seed=6)
    change = version_change(a, b, n_resamples=100, seed=0)
    assert change["design"] == "independent" and change["n_prompts_shared"] == 60
    row = next(r for r in change["rates"] if r["measure"] == "refusal" and r["value"] == "female")
    s_a = int(a[a.attribute_value == "female"].hard_refusal.sum())
    s_b = int(b[b.attribute_value == "female"].hard_refusal.sum())
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(
        confint_proportions_2indep(s_b, 40, s_a, 30, method="newcomb"), abs=1e-12
    )
    table = [[s_a, 30 - s_a], [s_b, 40 - s_b]]
    assert row["test"] == "chi-square"
    assert row["p_value"] == pytest.approx(chi2_contingency(table, correction=False).pvalue)


def test_holm_and_bh_run_over_the_whole_comparison():
    annotations, judgments = validated_frames(*synthetic_study(n_items=480, seed=2))
    frame = judgments[judgments.judge == judgments.judge.iloc[0]].reset_index(drop=True)
    out = models_side_by_side(
        frame,
        model_column="generator",
        baseline="generator-a",
        candidate="generator-b",
        n_resamples=100,
    )
    rows = [r for r in out["change"]["rates"] + out["change"]["deltas"] if r["p_value"] is not None]
    p_values = [r["p_value"] for r in rows]
    assert [r["p_holm"] for r in rows] == pytest.approx(multipletests(p_values, method="holm")[1])
    assert [r["p_bh"] for r in rows] == pytest.approx(multipletests(p_values, method="fdr_bh")[1])
    # Each model's rates and Δ are the study export's own.
    cell = out["per_model"]["generator-a"]["refusal"]["gender"]
    assert set(cell) >= {"values", "delta", "delta_ci_low", "delta_ci_high"}


def test_no_shared_prompt_is_null_with_a_reason():
    a = _frame({"female": 0.2, "male": 0.3}, n_prompts=10, seed=1)
    b = _frame({"female": 0.2, "male": 0.3}, n_prompts=10, seed=2)
    b["base_prompt_id"] = "other-" + b["base_prompt_id"]
    change = version_change(a, b, n_resamples=50)
    assert change["design"] is None and change["design_reason"] == NO_SHARED_PROMPT
    assert change["rates"] == [] and change["deltas"] == []


def test_one_cluster_per_stratum_and_zero_counts_are_null_with_reasons():
    a = _frame({"female": 0.5, "male": 0.3}, n_prompts=4, domains=4, per_prompt=3, seed=1)
    b = _frame({"female": 0.5, "male": 0.3}, n_prompts=4, domains=4, per_prompt=3, seed=2)
    change = version_change(a, b, n_resamples=50)
    delta = next(r for r in change["deltas"] if r["measure"] == "refusal")
    assert delta["ci_low"] is None and delta["ci_reason_code"] == "one_cluster_per_stratum"
    assert delta["p_value"] is None and delta["p_value_reason"]
    # A value with no counted row in the candidate: no difference, and a reason.
    b_without = b[b.attribute_value != "male"].reset_index(drop=True)
    b_without = pd.concat(
        [b_without, b[b.attribute_value == "male"].assign(hard_refusal=True, cue=None)],
        ignore_index=True,
    )
    change = version_change(a, b_without, n_resamples=0)
    erasure = next(r for r in change["rates"] if r["measure"] == "erasure" and r["value"] == "male")
    assert erasure["difference"] is None and erasure["difference_reason"]
    assert erasure["ci_reason_code"] == "no_observations"


def test_the_section_lists_every_source_and_refuses_one_model_twice():
    annotations, judgments = validated_frames(*synthetic_study(n_items=240, seed=1))
    sources = {"human": annotations}
    for judge, frame in judgments.groupby("judge"):
        sources[f"auto:{judge}"] = frame.reset_index(drop=True)
    section = comparison_by_source(
        sources,
        model_column="generator",
        baseline="generator-a",
        candidate="generator-b",
        n_resamples=20,
    )
    assert list(section["sources"]) == list(sources)
    assert section["sources"]["human"]["models"] == ["generator-a", "generator-b"]
    with pytest.raises(ValueError, match="two different"):
        comparison_by_source(sources, model_column="generator", baseline="x", candidate="x")


def test_two_identical_models_are_rarely_called_different():
    """Type-I error of the paired tests when nothing changed: rejections at 0.05 stay near 5 %
    (at most 10 % over 100 simulated studies) for a rate's change and for Δ's change."""
    rejected = {"rate": 0, "delta": 0}
    for study in range(100):
        a = _frame({"female": 0.3, "male": 0.3}, n_prompts=40, domains=3, per_prompt=2, seed=study)
        b = _frame(
            {"female": 0.3, "male": 0.3}, n_prompts=40, domains=3, per_prompt=2, seed=1000 + study
        )
        change = version_change(a, b, n_resamples=200, seed=study)
        rate = next(r for r in change["rates"] if r["measure"] == "refusal")
        delta = next(r for r in change["deltas"] if r["measure"] == "refusal")
        rejected["rate"] += rate["p_value"] < 0.05
        rejected["delta"] += delta["p_value"] < 0.05
    assert rejected["rate"] <= 10 and rejected["delta"] <= 10, rejected

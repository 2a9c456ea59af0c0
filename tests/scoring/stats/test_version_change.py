"""Models side by side (scoring/stats/version_change.py) against independent references:
statsmodels' Newcombe interval and McNemar test, statsmodels' Holm and BH, and loops that
rebuild every resampled data set for the paired bootstrap and the Δ change; and the unit of
analysis: two labels of one item are one item's evidence."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import confint_proportions_2indep

from scoring.stats import bootstrap
from scoring.stats.disparity import ClusterResample
from scoring.stats.interval_checks import intervals_excluding_estimate
from scoring.stats.study_metrics import validated_frames
from scoring.stats.synthetic_study import synthetic_study
from scoring.stats.version_change import (
    NO_SHARED_PROMPT,
    comparison_by_source,
    inverted_p_value,
    mcnemar_exact_p,
    models_side_by_side,
    newcombe_interval,
    version_change,
)
from tests.scoring.stats.reference_loops import delta_interval_naive, rates_resamples_naive


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


def test_inverted_p_value_is_where_the_interval_touches_zero():
    # An interval d ± z(1 − α/2)·se with d = 0.2, se = 0.1: it touches 0 at z = 2, p = 0.0455.
    def margin(alpha):
        return 0.2 - stats.norm.isf(alpha / 2) * 0.1

    p_value = inverted_p_value(margin, confidence=0.95, continuous=True)
    assert p_value == pytest.approx(2 * stats.norm.sf(2.0), rel=1e-9)
    assert inverted_p_value(lambda alpha: -1.0, confidence=0.95, continuous=False) == 1.0
    # A step function: the interval excludes 0 from α = 0.3 on (exclusive below).
    p_value = inverted_p_value(lambda alpha: 1.0 if alpha > 0.3 else -1.0, confidence=0.95,
                               continuous=False)  # fmt: skip
    assert p_value == pytest.approx(0.3, abs=1e-9) and p_value >= 0.05


def _rebuilt_rates(union, side, value, resample):
    """(B,) rate of ``value`` on ``side`` in every resample, rebuilt row by row from the drawn
    base prompts with their Rao–Wu weights (tests/scoring/stats/reference_loops.py)."""
    _, stratum_of_cluster = bootstrap.cluster_strata(union["base_prompt_id"], union["domain"])
    sizes = np.bincount(stratum_of_cluster)[stratum_of_cluster]
    weight = np.where(sizes >= 2, sizes / np.maximum(sizes - 1, 1), 1.0)
    rows = (union["side"] == side) & (union["attribute_value"] == value)
    return rates_resamples_naive(
        union["hard_refusal"].to_numpy()[rows],
        np.zeros(int(rows.sum()), dtype=np.int64),
        resample.cluster_codes[rows.to_numpy()],
        resample.indices,
        draw_weight=weight,
    )[:, 0]


def _paired_union(a, b, *, n_resamples, seed):
    union = pd.concat([a.assign(side="a"), b.assign(side="b")], ignore_index=True)
    resample = ClusterResample(union, n_resamples=n_resamples, rng=np.random.default_rng(seed))
    return union, resample


def test_paired_rate_change_is_the_max_t_band_of_the_pair_from_rebuilt_resamples():
    a = _frame({"female": 0.3, "male": 0.2}, n_prompts=30, domains=3, per_prompt=2, seed=1)
    b = _frame({"female": 0.5, "male": 0.2}, n_prompts=30, domains=3, per_prompt=2, seed=2)
    change = version_change(a, b, n_resamples=300, seed=5)
    union, resample = _paired_union(a, b, n_resamples=300, seed=5)
    for value in ("female", "male"):
        row = next(r for r in change["rates"] if r["measure"] == "refusal" and r["value"] == value)
        rate_a = a[a.attribute_value == value].hard_refusal.mean()
        rate_b = b[b.attribute_value == value].hard_refusal.mean()
        resampled = _rebuilt_rates(union, "b", value, resample) - _rebuilt_rates(
            union, "a", value, resample
        )
        difference = rate_b - rate_a
        se = resampled.std(ddof=1)
        t_max = np.sort(np.abs(resampled - difference) / se)
        critical = t_max[len(t_max) - int(np.ceil(round(0.05 * len(t_max), 9)))]
        # Student's t with the design's degrees of freedom: 30 base prompts in 3 domains.
        critical = stats.t.isf(stats.norm.sf(critical), 27)
        observed = stats.norm.isf(stats.t.sf(abs(difference) / se, 27))
        assert row["test"] == "cluster-bootstrap"
        assert row["difference"] == pytest.approx(difference)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(
            (difference - critical * se, difference + critical * se), abs=1e-12
        )
        assert row["p_value"] == pytest.approx(max(np.sum(t_max >= observed), 1) / len(t_max))
        assert (row["n_items_baseline"], row["n_baseline"]) == (60, 60)


def test_with_one_outcome_per_prompt_the_paired_test_decides_as_mcnemar_does():
    """McNemar's exact test is the reference where each prompt has one outcome per model: the
    bootstrap test, which also holds with several labels per item, reaches its decision."""
    agree, p_values = 0, []
    for study in range(20):
        a = _frame({"female": 0.3, "male": 0.3}, n_prompts=40, domains=4, seed=study)
        b = _frame({"female": 0.3 + 0.02 * study, "male": 0.3}, n_prompts=40, domains=4,
                   seed=500 + study)  # fmt: skip
        row = next(
            r
            for r in version_change(a, b, n_resamples=400, seed=study)["rates"]
            if r["measure"] == "refusal" and r["value"] == "female"
        )
        ordered_a = a[a.attribute_value == "female"].sort_values("base_prompt_id")
        ordered_b = b[b.attribute_value == "female"].sort_values("base_prompt_id")
        reference = mcnemar_exact_p(ordered_a.hard_refusal, ordered_b.hard_refusal)
        agree += (row["p_value"] < 0.05) == (reference < 0.05)
        p_values.append((row["p_value"], reference))
    assert agree >= 18, p_values


def test_delta_change_is_the_two_delta_intervals_from_rebuilt_resamples():
    """Δ_B − Δ_A lies in [L_B − U_A, U_B − L_A] with each model's Δ interval (the pair-by-pair
    loop of "Δ interval") at 1 − α/2, on resamples rebuilt from the same paired draws."""
    a = _frame({"female": 0.3, "male": 0.1}, n_prompts=12, per_prompt=2, seed=3)
    b = _frame({"female": 0.5, "male": 0.1}, n_prompts=12, per_prompt=2, seed=4)
    change = version_change(a, b, n_resamples=150, seed=7)
    row = next(r for r in change["deltas"] if r["measure"] == "refusal")
    rates_a = a.groupby("attribute_value").hard_refusal.mean()
    rates_b = b.groupby("attribute_value").hard_refusal.mean()
    delta_a, delta_b = rates_a.max() - rates_a.min(), rates_b.max() - rates_b.min()
    assert row["difference"] == pytest.approx(delta_b - delta_a)
    union, resample = _paired_union(a, b, n_resamples=150, seed=7)
    bounds = {}
    for side, rates in (("a", rates_a), ("b", rates_b)):
        boot = np.column_stack(
            [_rebuilt_rates(union, side, value, resample) for value in ("female", "male")]
        )
        bounds[side] = delta_interval_naive(
            [rates["female"], rates["male"]], boot, confidence=0.975, df=resample.df
        )
    expected = (bounds["b"][0] - bounds["a"][1], bounds["b"][1] - bounds["a"][0])
    assert row["test"] == "delta-intervals"
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(expected, abs=1e-12)
    # Several outcomes per prompt: the rate's test is the bootstrap band.
    rate = next(r for r in change["rates"] if r["measure"] == "refusal")
    assert rate["test"] == "cluster-bootstrap"


def test_independent_design_with_one_label_per_item_is_newcombe_and_its_inversion():
    a = _frame({"female": 0.2, "male": 0.3}, n_prompts=30, seed=5)
    b = _frame({"female": 0.5, "male": 0.3}, n_prompts=40, seed=6)
    change = version_change(a, b, n_resamples=100, seed=0)
    assert change["design"] == "independent" and change["n_prompts_shared"] == 60
    row = next(r for r in change["rates"] if r["measure"] == "refusal" and r["value"] == "female")
    s_a = int(a[a.attribute_value == "female"].hard_refusal.sum())
    s_b = int(b[b.attribute_value == "female"].hard_refusal.sum())
    # One label per base prompt and value: the effective sample size is the label count.
    assert (row["n_effective_baseline"], row["n_effective_candidate"]) == (30, 40)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(
        confint_proportions_2indep(s_b, 40, s_a, 30, method="newcomb"), abs=1e-12
    )
    # The test inverts the interval: at confidence 1 − p statsmodels' interval touches 0.
    assert row["test"] == "newcombe-inverted" and 0 < row["p_value"] < 1
    touching = confint_proportions_2indep(s_b, 40, s_a, 30, method="newcomb", alpha=row["p_value"])
    assert min(abs(bound) for bound in touching) == pytest.approx(0, abs=1e-9)


def _two_labels(frame):
    """Every item labelled twice (two annotators who agree): the same evidence, twice the rows."""
    return pd.concat([frame, frame], ignore_index=True)


def test_an_independent_interval_does_not_narrow_when_each_item_is_labelled_twice():
    a = _frame({"female": 0.2, "male": 0.3}, n_prompts=30, seed=5)
    b = _frame({"female": 0.4, "male": 0.3}, n_prompts=40, seed=6)
    b["base_prompt_id"] = np.where(b.index % 2 == 0, b.base_prompt_id, "x" + b.base_prompt_id)
    once, twice = (version_change(x, y, n_resamples=0) for x, y in ((a, b), (_two_labels(a), _two_labels(b))))  # fmt: skip
    for row_once, row_twice in zip(once["rates"], twice["rates"], strict=True):
        if row_once["ci_low"] is None:
            continue
        width_once = row_once["ci_high"] - row_once["ci_low"]
        assert row_twice["ci_high"] - row_twice["ci_low"] >= width_once - 1e-12
        assert row_twice["p_value"] >= row_once["p_value"] - 1e-12
        assert row_twice["n_baseline"] == 2 * row_once["n_baseline"]
        assert row_twice["n_items_baseline"] == row_once["n_items_baseline"]


def test_independent_comparison_of_identical_two_label_studies_keeps_its_size():
    """Before the fix the two-proportion test on annotation counts rejected 18 % of identical
    two-annotator comparisons (docs/metrics.md, "Models side by side")."""
    from scoring.stats.validity.comparison_scenarios import SCENARIOS

    checks = SCENARIOS["compare independent n=30 k=2 identical"](60, 11)
    size = next(check for check in checks if check.statistic == "rate_test")
    assert size.replications == 240 and size.rate <= 0.08, size


def test_every_interval_agrees_with_its_test_and_holds_its_estimate():
    for seed in range(6):
        a = _frame({"female": 0.2, "male": 0.3}, n_prompts=24, domains=3, per_prompt=2, seed=seed)
        b = _frame({"female": 0.35, "male": 0.3}, n_prompts=24, domains=3, per_prompt=2,
                   seed=100 + seed)  # fmt: skip
        shifted = b.assign(base_prompt_id=np.where(b.index % 3 == 0, "x", "") + b.base_prompt_id)
        for candidate in (b, shifted):
            change = version_change(a, candidate, n_resamples=200, seed=seed)
            assert intervals_excluding_estimate(change) == []
            for row in change["rates"] + change["deltas"]:
                if row["ci_low"] is None:
                    assert row["p_value"] is None
                    continue
                excludes = row["ci_low"] > 0 or row["ci_high"] < 0
                assert excludes == (row["p_value"] < 0.05), row


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

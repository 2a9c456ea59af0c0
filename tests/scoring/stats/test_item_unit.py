"""The item is the unit: rates, tests and the Δ test count items, not annotations (issue 30).

Each test here fails on the code before the change: it built Wilson intervals and χ² tests on
annotation counts, drew m of m base prompts per domain, and had no Δ test of its own.
"""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from scoring.stats import bootstrap
from scoring.stats.delta_interval import (
    critical_value,
    pairwise_band,
    ratio_interval_block,
    simultaneous_delta_interval,
)
from scoring.stats.disparity import ClusterResample, design_degrees_of_freedom
from scoring.stats.proportions import effective_sample_size, wilson_bounds
from scoring.stats.study_metrics import study_metrics


def _frame(labels_per_item, n_prompts=40, seed=0, rate=0.3):
    """Two values, one item per base prompt and value, each item labelled k times identically."""
    rng = np.random.default_rng(seed)
    rows = []
    for prompt in range(n_prompts):
        for value in ("a", "b"):
            refused = bool(rng.random() < rate)
            for annotator in range(labels_per_item):
                rows.append(
                    {
                        "item_id": f"{prompt}-{value}",
                        "attribute": "culture",
                        "attribute_value": value,
                        "base_prompt_id": f"bp{prompt}",
                        "domain": f"d{prompt % 4}",
                        "generator": "g",
                        "mode": "t2i",
                        "annotator": f"ann{annotator}",
                        "annotator_group": "",
                        "hard_refusal": refused,
                        "cue": None,
                    }
                )
    return pd.DataFrame(rows)


def _block(frame):
    return study_metrics(frame, None, n_resamples=300, seed=0)["rates"]["human"]["refusal"][
        "culture"
    ]


def test_two_identical_labels_per_item_carry_one_items_evidence():
    one, two = _block(_frame(1)), _block(_frame(2))
    for value in ("a", "b"):
        single, double = one["values"][value], two["values"][value]
        assert double["rate"] == single["rate"]
        assert double["n"] == 2 * single["n"] and double["n_items"] == single["n_items"] == 40
        assert double["n_labels"] == 80
        # Duplicated labels add no information: the interval is no narrower than one label's
        # (it is a little wider: Korn–Graubard's t correction for 40 clusters).
        assert double["ci_low"] <= single["ci_low"] and double["ci_high"] >= single["ci_high"]
    assert [row["p_value"] for row in two["pairwise_tests"]] == pytest.approx(
        [row["p_value"] for row in one["pairwise_tests"]], abs=0.05
    )


def test_effective_sample_size_equals_the_korn_graubard_formula():
    rng = np.random.default_rng(3)
    totals = rng.integers(1, 4, size=(25, 1)).astype(float)
    successes = np.minimum(rng.binomial(totals.astype(int), 0.4), totals).astype(float)
    n, m = totals.sum(), 25
    p = successes.sum() / n
    robust = m / (m - 1) * ((successes - p * totals) ** 2).sum() / n**2
    design_effect = max(1.0, robust / (p * (1 - p) / n))
    expected = n / design_effect * (stats.norm.ppf(0.975) / stats.t.ppf(0.975, m - 1)) ** 2
    assert effective_sample_size(successes, totals)[0] == pytest.approx(min(expected, n))


def test_effective_sample_size_is_n_without_clusters_and_zero_for_one_cluster():
    singles = np.ones((30, 1))
    assert effective_sample_size(singles * (np.arange(30)[:, None] % 3 == 0), singles)[0] == 30
    one_cluster = effective_sample_size(np.array([[3.0]]), np.array([[8.0]]))
    assert one_cluster[0] == 0.0  # null interval with reason "one_cluster" in the export


def test_a_rate_of_zero_counts_one_label_per_cluster():
    totals = np.full((20, 1), 2.0)
    n_effective = effective_sample_size(np.zeros((20, 1)), totals)[0]
    assert n_effective == pytest.approx(20 * (stats.norm.ppf(0.975) / stats.t.ppf(0.975, 19)) ** 2)
    low, high = wilson_bounds(0.0, n_effective)
    assert low == 0.0 and high > float(wilson_bounds(0, 40)[1])


def test_rao_wu_weights_give_the_unbiased_variance_of_a_stratum_mean():
    # One stratum of m clusters: the bootstrap variance of the mean equals s²/m (ddof = 1); the
    # m-of-m bootstrap gave (m − 1)/m of it.
    values = np.array([0.0, 1.0, 0.0, 1.0, 1.0])
    strata = np.zeros(5, dtype=np.int64)
    indices = bootstrap.stratified_cluster_indices(
        strata, n_resamples=40_000, rng=np.random.default_rng(0)
    )
    weights = bootstrap.cluster_weights(indices, strata)
    means = (weights @ values) / weights.sum(axis=1)
    assert means.var() == pytest.approx(values.var(ddof=1) / 5, rel=0.03)


def test_rao_wu_keeps_each_strata_share():
    strata = np.array([0, 0, 0, 1, 1, 2])  # 3, 2 and 1 clusters
    indices = bootstrap.stratified_cluster_indices(
        strata, n_resamples=10, rng=np.random.default_rng(1)
    )
    weights = bootstrap.cluster_weights(indices, strata)
    for stratum, size in ((0, 3), (1, 2), (2, 1)):
        assert weights[:, strata == stratum].sum(axis=1) == pytest.approx(np.full(10, size))
    assert design_degrees_of_freedom(strata) == (3 - 1) + (2 - 1)


@pytest.mark.parametrize("seed", range(20))
def test_delta_test_agrees_with_its_interval(seed):
    rng = np.random.default_rng(seed)
    point = rng.uniform(0.1, 0.4, 4)
    boot = point + rng.normal(0, rng.uniform(0.01, 0.08), (400, 4))
    for df in (None, 12, np.array([3.0, 8.0, 20.0, 2.0, 5.0, 40.0])):
        band = pairwise_band(point, boot, df=df)
        low, _, _ = simultaneous_delta_interval(point, boot, df=df)
        assert (low > 0) == (band.p_value < 0.05)


def test_critical_value_is_the_order_statistic_that_makes_p_agree():
    t_max = np.arange(1, 401, dtype=float)  # B = 400, α B = 20
    assert critical_value(t_max, 0.95) == 381.0
    assert np.sum(t_max >= 381.5) / 400 < 0.05 and np.sum(t_max >= 381.0) / 400 >= 0.05


def test_delta_test_has_a_p_value_of_one_over_b_at_least():
    point = np.array([0.1, 0.9])
    boot = point + np.random.default_rng(0).normal(0, 0.01, (200, 2))
    assert pairwise_band(point, boot).p_value == pytest.approx(1 / 200)


def test_ratio_interval_holds_one_when_no_pair_differs_and_holds_its_estimate():
    rng = np.random.default_rng(4)
    point = np.array([0.25, 0.26, 0.24])
    boot = point + rng.normal(0, 0.04, (500, 3))
    block = ratio_interval_block(point, boot, confidence=0.95, n_resamples=500)
    assert block["ratio_ci_low"] == 1.0
    assert block["ratio_ci_high"] >= point.max() / point.min()


def test_design_df_moves_the_critical_value_to_students_t():
    rng = np.random.default_rng(5)
    point = np.array([0.2, 0.3, 0.25])
    boot = point + rng.normal(0, 0.03, (400, 3))
    plain, small = pairwise_band(point, boot), pairwise_band(point, boot, df=8)
    widened = stats.t.isf(stats.norm.sf(plain.critical), 8)
    assert small.half_widths == pytest.approx(plain.half_widths / plain.critical * widened)
    assert (small.half_widths > plain.half_widths).all()


def test_cluster_resample_records_the_design_df():
    frame = _frame(2, n_prompts=12)
    resample = ClusterResample(frame, n_resamples=10, rng=np.random.default_rng(0))
    assert resample.df == 12 - 4  # 12 base prompts in 4 domains


def test_satterthwaite_df_equals_the_formula_by_hand():
    from scoring.stats.disparity import satterthwaite_df

    rng = np.random.default_rng(8)
    strata = np.array([0, 0, 0, 1, 1, 1, 1, 2, 2, 2])
    totals = np.full((10, 2), 2.0)
    successes = rng.integers(0, 3, size=(10, 2)).astype(float)
    rates = successes.sum(0) / totals.sum(0)
    residual = (successes - rates * totals) / totals.sum(0)
    e = residual[:, 0] - residual[:, 1]
    v = [
        m / (m - 1) * ((e[strata == h] - e[strata == h].mean()) ** 2).sum()
        for h, m in ((0, 3), (1, 4), (2, 3))
    ]
    expected = sum(v) ** 2 / sum(vh**2 / (m - 1) for vh, m in zip(v, (3, 4, 3), strict=True))
    assert satterthwaite_df(successes, totals, strata)[0] == pytest.approx(expected)


def test_three_domains_of_two_base_prompts_give_no_band():
    frame = _frame(2, n_prompts=6)
    frame["domain"] = [f"d{int(p[2:]) % 3}" for p in frame["base_prompt_id"]]
    block = _block(frame)
    assert block["delta_ci_low"] is None and block["delta_p_value"] is None
    assert block["delta_ci_reason_code"] == "too_few_resamples"

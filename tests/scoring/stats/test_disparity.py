"""Rates, Δ, ratios, the cluster bootstrap (vectorised vs a naive loop) and the test of Δ."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from statsmodels.stats.proportion import proportion_confint

from scoring.stats import bootstrap
from scoring.stats.disparity import (
    ClusterResample,
    delta_summary,
    disparity_report,
    rate_table,
    satterthwaite_df,
)
from tests.scoring.stats.reference_loops import delta_interval_naive, rates_resamples_naive


def clustered_frame(seed, *, n_prompts=40, effect=0.0):
    rng = np.random.default_rng(seed)
    rows = []
    for prompt in range(n_prompts):
        base = rng.normal(-1.5, 0.7)
        for value_index, value in enumerate(["Kenyan", "Korean", "US"]):
            for _ in range(4):
                p = 1 / (1 + np.exp(-(base + effect * value_index)))
                rows.append(
                    ("culture", value, f"bp-{prompt}", f"domain-{prompt % 3}", rng.random() < p)
                )
        rows.append(
            ("neutral", "neutral", f"bp-{prompt}", f"domain-{prompt % 3}", rng.random() < 0.2)
        )
    return pd.DataFrame(
        rows, columns=["attribute", "attribute_value", "base_prompt_id", "domain", "refused"]
    )


def test_delta_summary_ties_and_zero_minimum():
    summary = delta_summary({"b": 0.3, "a": 0.3, "c": 0.0})
    assert summary["max_value"] == "a" and summary["min_value"] == "c"
    assert summary["delta"] == pytest.approx(0.3) and summary["ratio"] is None
    assert summary["ratio_reason"] == "the minimum rate is 0"
    assert delta_summary({"a": 0.1, "b": None})["delta"] is None


def test_rate_table_skips_na_outcomes_and_uses_wilson():
    frame = pd.DataFrame({"value": ["a", "a", "a", "b"], "erased": [True, False, None, True]})
    table = rate_table(frame, outcome="erased", by=["value"]).set_index("value")
    assert table.loc["a", "n"] == 2 and table.loc["a", "successes"] == 1
    low, high = proportion_confint(1, 2, method="wilson")
    assert table.loc["a", "ci_low"] == pytest.approx(low) and table.loc[
        "a", "ci_high"
    ] == pytest.approx(high)


def test_report_point_estimates_match_hand_counts():
    frame = clustered_frame(1)
    report = disparity_report(frame, frame["refused"], np.ones(len(frame), bool))
    culture = report["culture"]
    rates = frame[frame.attribute == "culture"].groupby("attribute_value")["refused"].mean()
    neutral_rate = frame[frame.attribute == "neutral"]["refused"].mean()
    for value, rate in rates.items():
        assert culture["values"][value]["rate"] == pytest.approx(rate)
        assert culture["values"][value]["ratio_to_neutral"] == pytest.approx(rate / neutral_rate)
    assert culture["delta"] == pytest.approx(rates.max() - rates.min())
    assert culture["max_value"] == rates.idxmax() and culture["ratio"] == pytest.approx(
        rates.max() / rates.min()
    )
    assert report["neutral"]["delta"] is None and "excluded" in report["neutral"]["delta_reason"]


def test_report_with_bootstrap_has_ordered_intervals_and_reference_ratios():
    frame = clustered_frame(2, effect=0.8)
    resample = ClusterResample(frame, n_resamples=500, rng=np.random.default_rng(0))
    report = disparity_report(
        frame,
        frame["refused"],
        np.ones(len(frame), bool),
        resample=resample,
        reference={"culture": "US"},
    )
    culture = report["culture"]
    assert culture["delta_ci_low"] <= culture["delta"] <= culture["delta_ci_high"]
    assert culture["values"]["US"]["ratio_to_reference"] == pytest.approx(1.0)
    assert culture["values"]["Kenyan"]["ratio_to_neutral_ci_low"] is not None


def test_resamples_are_stratified_by_domain():
    clusters, strata = np.repeat(np.arange(10), 3), np.repeat(np.arange(10) % 2, 3)
    codes, stratum_of_cluster = bootstrap.cluster_strata(clusters, strata)
    indices = bootstrap.stratified_cluster_indices(
        stratum_of_cluster, n_resamples=50, rng=np.random.default_rng(0)
    )
    drawn_strata = stratum_of_cluster[indices]
    # Rao–Wu: m − 1 = 4 draws from each stratum of 5 base prompts.
    assert (np.sum(drawn_strata == 0, axis=1) == 4).all() and (
        np.sum(drawn_strata == 1, axis=1) == 4
    ).all()


def culture_report(frame, *, n_resamples, seed):
    resample = ClusterResample(frame, n_resamples=n_resamples, rng=np.random.default_rng(seed))
    report = disparity_report(frame, frame["refused"], np.ones(len(frame), bool), resample=resample)
    return report["culture"], resample


@pytest.mark.parametrize("seed", range(3))
def test_shipped_delta_interval_equals_naive_loop_with_same_indices(seed):
    # The export's Δ interval (disparity_report over a ClusterResample) against a loop that
    # rebuilds every resampled data set from the same drawn base prompts.
    frame = clustered_frame(seed)
    frame = frame[frame.attribute == "culture"].reset_index(drop=True)
    culture, resample = culture_report(frame, n_resamples=300, seed=seed)
    # Δ's interval is built from simultaneous pairwise intervals (docs/metrics.md, "Δ interval").
    value_codes, _ = bootstrap.encode(frame["attribute_value"])
    _, stratum_of_cluster = bootstrap.cluster_strata(frame["base_prompt_id"], frame["domain"])
    sizes = np.bincount(stratum_of_cluster)[stratum_of_cluster]
    draw_weight = np.where(sizes >= 2, sizes / np.maximum(sizes - 1, 1), 1.0)
    slow = rates_resamples_naive(
        frame["refused"].to_numpy(),
        value_codes,
        resample.cluster_codes,
        resample.indices,
        draw_weight,
    )
    point = [culture["values"][value]["rate"] for value in ("Kenyan", "Korean", "US")]
    # The band's df: Satterthwaite's over the culture values (checked by hand in
    # test_item_unit.py), at most the design's.
    successes = np.zeros((resample.n_clusters, 3))
    totals = np.zeros((resample.n_clusters, 3))
    np.add.at(successes, (resample.cluster_codes, value_codes), frame["refused"].to_numpy())
    np.add.at(totals, (resample.cluster_codes, value_codes), 1.0)
    per_pair = satterthwaite_df(successes, totals, resample.stratum_of_cluster)
    df = float(np.clip(np.nanmin(per_pair), 1.0, resample.df))
    low, high = delta_interval_naive(point, slow, df=df)
    assert culture["delta_ci_low"] == pytest.approx(low, abs=1e-12)
    assert culture["delta_ci_high"] == pytest.approx(high, abs=1e-12)


def test_delta_interval_is_seeded():
    frame = clustered_frame(4)
    first, _ = culture_report(frame, n_resamples=200, seed=3)
    assert first == culture_report(frame, n_resamples=200, seed=3)[0]
    other, _ = culture_report(frame, n_resamples=200, seed=4)
    assert (first["delta_ci_low"], first["delta_ci_high"]) != (
        other["delta_ci_low"],
        other["delta_ci_high"],
    )


def test_delta_test_detects_an_effect_and_not_its_absence():
    # delta_p_value: the max-t test from the band of Δ's interval (docs/metrics.md, "Test of Δ").
    with_effect = clustered_frame(5, n_prompts=60, effect=1.2)
    culture, _ = culture_report(with_effect, n_resamples=500, seed=1)
    assert culture["delta_p_value"] < 0.01 and culture["delta_ci_low"] > 0
    null_p = []
    for seed in range(20):
        null, _ = culture_report(
            clustered_frame(100 + seed, n_prompts=30), n_resamples=200, seed=seed
        )
        null_p.append(null["delta_p_value"])
        # The test and the interval agree: p < 0.05 exactly when the interval excludes 0.
        assert (null["delta_p_value"] < 0.05) == (null["delta_ci_low"] > 0)
    # Under no effect p is roughly uniform: few small values, a middling median.
    assert np.mean(np.array(null_p) < 0.05) <= 0.2 and 0.2 < np.median(null_p) < 0.8


def test_delta_test_is_null_with_its_interval():
    frame = clustered_frame(6)
    report = disparity_report(frame, frame["refused"], np.ones(len(frame), bool))
    assert report["culture"]["delta_ci_low"] is None and report["culture"]["delta_p_value"] is None


@given(
    st.lists(
        st.tuples(st.integers(0, 5), st.sampled_from("abc"), st.booleans()), min_size=1, max_size=40
    )
)
def test_bootstrap_delta_stays_in_unit_interval(rows):
    clusters, values, success = (np.array(c) for c in zip(*rows, strict=True))
    frame = pd.DataFrame(
        {
            "attribute": "culture",
            "attribute_value": values,
            "base_prompt_id": clusters.astype(str),
            "domain": "d",
            "refused": success,
        }
    )
    culture, _ = culture_report(frame, n_resamples=50, seed=0)
    if culture["delta"] is not None:
        assert 0.0 <= culture["delta"] <= 1.0
        low, high = culture["delta_ci_low"], culture["delta_ci_high"]
        assert low is None or 0.0 <= low <= high <= 1.0


def _report_with_domains(frame, domains, n_resamples=200):
    frame = frame.assign(domain=domains)
    culture, _ = culture_report(frame, n_resamples=n_resamples, seed=0)
    return culture


def test_interval_is_null_with_a_reason_when_every_domain_has_one_base_prompt():
    frame = clustered_frame(7, n_prompts=3)
    culture = _report_with_domains(frame, frame["base_prompt_id"])  # one prompt per domain
    assert culture["delta"] is not None and culture["delta_ci_low"] is None
    assert culture["delta_ci_high"] is None
    assert culture["delta_ci_reason_code"] == "one_cluster_per_stratum"
    assert culture["values"]["US"]["ratio_to_neutral_ci_reason_code"] == "one_cluster_per_stratum"


def test_interval_needs_five_resampled_base_prompts():
    frame = clustered_frame(8, n_prompts=6)
    # bp-0..bp-3 share a domain (4 that vary); bp-4 and bp-5 are alone in theirs.
    domains = frame["base_prompt_id"].map(lambda p: "shared" if int(p[3:]) < 4 else p)
    assert _report_with_domains(frame, domains)["delta_ci_reason_code"] == "too_few_clusters"
    enough = _report_with_domains(frame, "one-domain")
    assert enough["delta_ci_low"] is not None and "delta_ci_reason" not in enough


def test_zero_width_interval_is_null_with_a_reason():
    frame = clustered_frame(9).assign(refused=False)  # Δ = 0 in every resample
    culture, _ = culture_report(frame, n_resamples=100, seed=0)
    assert culture["delta"] == 0.0 and culture["delta_ci_low"] is None
    assert culture["delta_ci_reason_code"] == "zero_width"
    assert culture["ratio_ci_reason_code"] == "undefined_estimate"  # max/min with min = 0


def test_no_resamples_and_no_observations_have_reason_codes():
    frame = clustered_frame(10)
    report = disparity_report(frame, frame["refused"], np.ones(len(frame), bool))
    assert report["culture"]["delta_ci_reason_code"] == "no_resamples"
    counted = (frame["attribute_value"] != "US").to_numpy()
    empty = disparity_report(frame, frame["refused"], counted)["culture"]["values"]["US"]
    assert empty["ci_low"] is None and empty["ci_reason_code"] == "no_observations"

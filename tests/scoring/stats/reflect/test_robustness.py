"""Template-cluster bootstrap and leave-one-template-out against naive loops
(docs/metrics.md, "REFLECT: robustness")."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from scoring.stats.reflect.robustness import (
    cluster_bootstrap,
    leave_one_template_out,
    percentile_interval,
    reweighted,
    template_resample_counts,
)

STRATA = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2])


def test_resamples_stay_within_occupation_and_are_reproducible():
    counts = template_resample_counts(STRATA, 500, 7)
    for stratum in np.unique(STRATA):
        members = STRATA == stratum
        assert np.all(counts[:, members].sum(axis=1) == members.sum())
    np.testing.assert_array_equal(counts, template_resample_counts(STRATA, 500, 7))
    assert not np.array_equal(counts, template_resample_counts(STRATA, 500, 8))
    # Each template is drawn once per resample on average.
    np.testing.assert_allclose(counts.mean(axis=0), 1.0, atol=0.15)


def test_reweighted_matches_a_loop():
    rng = np.random.default_rng(0)
    per_template = {"x": rng.random((9, 3, 2))}
    weights = template_resample_counts(STRATA, 20, rng)
    out = reweighted(per_template, weights)["x"]
    for b in range(20):
        expected = sum(weights[b, t] * per_template["x"][t] for t in range(9))
        np.testing.assert_allclose(out[b], expected)
    by_stratum = reweighted(per_template, weights, STRATA)["x"]
    assert by_stratum.shape == (20, 3, 3, 2)
    np.testing.assert_allclose(by_stratum.sum(axis=1), out)


def _zeros_with(nan_rows, minus_one_rows):
    draws = np.zeros((50, 3))
    draws[nan_rows, 2], draws[minus_one_rows, 2] = np.nan, -1.0
    return draws


@given(arrays(np.float64, (50, 3), elements=st.floats(-5, 5) | st.just(np.nan)))
@example(_zeros_with([0, 2, 6, 16, 20, 22, 30, 44, 46], [18, 36]))  # found by hypothesis
def test_percentile_interval_matches_nanquantile(draws):
    low, high, undefined = percentile_interval(draws, confidence=0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns
        expected = np.nanquantile(draws, [0.05, 0.95], axis=0)
    # (1 - 0.9) / 2 is 0.04999999999999999 in floating point, not numpy's 0.05: between two
    # order statistics -1 and 0 that moves the quantile by 4e-16, hence the absolute tolerance.
    np.testing.assert_allclose(low, expected[0], equal_nan=True, atol=1e-12)
    np.testing.assert_allclose(high, expected[1], equal_nan=True, atol=1e-12)
    np.testing.assert_array_equal(undefined, np.isnan(draws).sum(axis=0))


def _rate(successes, trials):
    with np.errstate(invalid="ignore", divide="ignore"):
        return {"rate": successes / trials}


@settings(deadline=None, max_examples=20)
@given(st.integers(0, 2**32 - 1))
def test_bootstrap_matches_a_per_resample_loop(seed):
    rng = np.random.default_rng(seed)
    per_template = {"successes": rng.integers(0, 5, 9).astype(float), "trials": np.full(9, 5.0)}
    result = cluster_bootstrap(
        per_template, STRATA, _rate, n_resamples=300, rng=seed, chunk_size=64
    )
    weights = template_resample_counts(STRATA, 300, seed)
    loop = [
        (weights[b] * per_template["successes"]).sum() / (weights[b] * per_template["trials"]).sum()
        for b in range(300)
    ]
    assert result["rate"]["low"] == pytest.approx(np.quantile(loop, 0.025))
    assert result["rate"]["high"] == pytest.approx(np.quantile(loop, 0.975))


def test_leave_one_template_out_hand_worked():
    # Win counts of 4 templates; the rate is 0.5 + a small effect that flips without template 0.
    per_template = {"successes": np.array([4.0, 1.0, 2.0, 2.0]), "trials": np.full(4, 4.0)}
    result = leave_one_template_out(per_template, _rate, null={"rate": 0.5})["rate"]
    full = 9 / 16
    held_out = [5 / 12, 8 / 12, 7 / 12, 7 / 12]
    assert result["sign_stability"] == pytest.approx(3 / 4)
    assert result["max_abs_deviation"] == pytest.approx(max(abs(h - full) for h in held_out))
    assert result["undefined"] == 0


def test_leave_one_template_out_relevance_restricts_to_own_stratum():
    per_template = {"successes": np.array([4.0, 1.0, 2.0, 2.0]), "trials": np.full(4, 4.0)}
    relevance = {"rate": np.array([True, False, False, False])}
    result = leave_one_template_out(per_template, _rate, null={"rate": 0.5}, relevance=relevance)[
        "rate"
    ]
    assert result["sign_stability"] == 0.0
    assert result["max_abs_deviation"] == pytest.approx(9 / 16 - 5 / 12)


def test_cluster_wilson_equals_statsmodels_wilson_at_the_effective_size_by_hand():
    # Reference: the survey ratio estimator's variance written out (Cochran 1977, §6.11), its
    # effective size p(1 − p)/v, and statsmodels' Wilson interval at the level whose normal
    # quantile is the t quantile on templates − occupations degrees of freedom.
    from scipy import stats
    from statsmodels.stats.proportion import proportion_confint

    from scoring.stats.reflect.robustness import cluster_wilson

    rng = np.random.default_rng(4)
    strata = np.repeat([0, 1, 2], 4)
    trials = rng.integers(3, 9, size=12).astype(float)
    successes = rng.binomial(trials.astype(int), 0.4).astype(float)
    p = successes.sum() / trials.sum()
    variance = 0.0
    for stratum in range(3):
        e = (successes - p * trials)[strata == stratum]
        variance += 4 / 3 * ((e - e.mean()) ** 2).sum()
    variance /= trials.sum() ** 2
    effective = p * (1 - p) / variance
    q = stats.t.ppf(0.975, 12 - 3)
    expected = proportion_confint(
        p * effective, effective, alpha=2 * stats.norm.sf(q), method="wilson"
    )
    low, high = cluster_wilson(successes, trials, strata)
    assert (float(low), float(high)) == pytest.approx(expected, abs=1e-10)

"""Δ's interval from simultaneous pairwise intervals (docs/metrics.md, "Δ interval")."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.stats import bootstrap
from scoring.stats.delta_interval import delta_interval_block, simultaneous_delta_interval
from tests.scoring.stats.reference_loops import delta_interval_naive


@pytest.mark.parametrize("seed", range(4))
def test_equals_the_pair_by_pair_loop(seed):
    rng = np.random.default_rng(seed)
    point = rng.uniform(0.1, 0.4, 4)
    boot = point + rng.normal(0, 0.03, (300, 4))
    boot[rng.random(300) < 0.05, 1] = np.nan  # undefined resamples are left out
    low, high, used = simultaneous_delta_interval(point, boot)
    assert (low, high) == pytest.approx(delta_interval_naive(point, boot), abs=1e-12)
    assert used == int(np.isfinite(boot).all(axis=1).sum())


def _clustered_rates(rng, rates, n_prompts=80, n_resamples=400):
    """Per-value rates and their cluster-bootstrap resamples for one simulated study."""
    shift = rng.uniform(-0.08, 0.08, n_prompts)
    outcome = rng.random((n_prompts, len(rates))) < np.asarray(rates) + shift[:, None]
    indices = bootstrap.stratified_cluster_indices(
        np.zeros(n_prompts, dtype=np.int64), n_resamples=n_resamples, rng=rng
    )
    counts = bootstrap.draw_counts(indices, n_prompts)
    return outcome.mean(axis=0), (counts @ outcome) / counts.sum(axis=1, keepdims=True)


def test_holds_zero_when_every_value_has_the_same_rate():
    # The percentile bootstrap of max − min never reached 0 here; this interval must.
    rng = np.random.default_rng(11)
    lows = []
    for _ in range(200):
        point, boot = _clustered_rates(rng, [0.25] * 4)
        lows.append(simultaneous_delta_interval(point, boot)[0])
        old = np.percentile(bootstrap.delta_of_rates(boot), 2.5)
        assert old > 0
    assert np.mean(np.array(lows) == 0.0) >= 0.93


def test_covers_a_true_difference_and_excludes_zero_when_it_is_large():
    rng = np.random.default_rng(12)
    covered, excluded = [], []
    for _ in range(200):
        point, boot = _clustered_rates(rng, [0.1, 0.2, 0.35])
        low, high, _ = simultaneous_delta_interval(point, boot)
        covered.append(low <= 0.25 <= high)
        excluded.append(low > 0)
    assert np.mean(covered) >= 0.93 and np.mean(excluded) >= 0.9


def test_null_with_reasons():
    for point in ([], [0.3]):  # fewer than two defined values
        empty = delta_interval_block(
            point, np.zeros((50, len(point))), confidence=0.95, n_resamples=50
        )
        assert empty["delta_ci_reason_code"] == "undefined_in_every_resample"
    block = delta_interval_block([0.1, 0.2], None, confidence=0.95, n_resamples=0)
    assert block["delta_ci_low"] is None and block["delta_ci_reason_code"] == "no_resamples"
    flat = delta_interval_block([0.0, 0.0], np.zeros((50, 2)), confidence=0.95, n_resamples=50)
    assert flat["delta_ci_reason_code"] == "zero_width"
    nothing = delta_interval_block(
        [0.1, 0.2], np.full((50, 2), np.nan), confidence=0.95, n_resamples=50
    )
    assert nothing["delta_ci_reason_code"] == "undefined_in_every_resample"
    too_few = delta_interval_block(
        [0.1, 0.2],
        np.zeros((50, 2)),
        confidence=0.95,
        n_resamples=50,
        design_code="too_few_clusters",
    )
    assert too_few["delta_ci_reason_code"] == "too_few_clusters"


@given(
    st.lists(st.floats(0, 1), min_size=2, max_size=6),
    st.floats(0.001, 0.2),
    st.integers(0, 2**32 - 1),
)
def test_the_interval_lies_in_the_unit_interval_and_holds_the_point_estimate(rates, spread, seed):
    point = np.array(rates)
    boot = np.clip(point + np.random.default_rng(seed).normal(0, spread, (100, point.size)), 0, 1)
    low, high, _ = simultaneous_delta_interval(point, boot)
    delta = point.max() - point.min()
    assert 0.0 <= low <= delta + 1e-12 and delta - 1e-12 <= high <= 1.0

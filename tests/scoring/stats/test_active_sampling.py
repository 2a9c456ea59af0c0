"""Active inclusion probabilities (docs/metrics.md, "Active sampling")."""

import numpy as np
import pytest

from scoring.stats.active_sampling import active_inclusion_probabilities, poisson_sample


def test_probabilities_sum_to_the_budget_grow_with_uncertainty_and_stay_positive():
    rng = np.random.default_rng(0)
    uncertainty = rng.random(1000)
    strata = np.repeat(["a", "b", "c", "d"], 250)
    pi = active_inclusion_probabilities(uncertainty, strata, budget=200, min_per_stratum=20)
    assert pi.sum() == pytest.approx(200, rel=1e-9)
    assert np.all(pi > 0) and np.all(pi <= 1)
    order = np.argsort(uncertainty)
    assert np.all(np.diff(pi[order]) >= -1e-12)  # non-decreasing in the uncertainty


def test_every_stratum_gets_its_minimum_even_when_the_judge_is_sure_there():
    uncertainty = np.concatenate([np.zeros(100), np.ones(900)])
    strata = np.repeat(["sure", "unsure"], [100, 900])
    pi = active_inclusion_probabilities(uncertainty, strata, budget=150, min_per_stratum=30)
    assert pi[:100].sum() >= 30 - 1e-9
    assert pi.sum() == pytest.approx(150, rel=1e-9)


def test_caps_at_one_and_refuses_impossible_budgets():
    pi = active_inclusion_probabilities(np.array([0.0, 0.0, 10.0]), [1, 1, 1], budget=2)
    assert pi[2] == 1.0 and pi.sum() == pytest.approx(2)
    with pytest.raises(ValueError, match="stratified minimum"):
        active_inclusion_probabilities(np.ones(10), [0] * 5 + [1] * 5, budget=3, min_per_stratum=2)
    with pytest.raises(ValueError, match="floor"):
        active_inclusion_probabilities(np.ones(10), [0] * 10, budget=3, floor=0)


def test_poisson_sample_draws_each_item_with_its_probability():
    pi = np.full(20_000, 0.3)
    drawn = poisson_sample(pi, np.random.default_rng(1))
    assert drawn.mean() == pytest.approx(0.3, abs=0.01)

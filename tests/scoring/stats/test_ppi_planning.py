"""The budget planning aid (scoring.stats.ppi_planning) against ppi_py and a simulation."""

import math

import numpy as np
import pytest

from scoring.stats import ppi_planning as planning

ppi_py = pytest.importorskip("ppi_py")


def _labels(rng, n, rate, accuracy):
    truth = rng.random(n) < rate
    wrong = rng.random(n) > accuracy
    return truth.astype(float), np.where(wrong, ~truth, truth).astype(float)


def test_correlation_from_accuracy_matches_the_sample_correlation():
    rng = np.random.default_rng(0)
    truth, judged = _labels(rng, 400_000, 0.3, 0.85)
    assert planning.correlation_from_accuracy(0.85, 0.3) == pytest.approx(
        np.corrcoef(truth, judged)[0, 1], abs=0.005
    )
    assert planning.correlation_from_accuracy(0.5, 0.3) == pytest.approx(0.0)


def test_variance_is_ppi_pys_effective_sample_size():
    """ppi_py's power analysis: Var = σ² / n_eff, n_eff = n (n + N_u) / (n + (1 − ρ²) N_u)."""
    rho, n, n_unlabelled = 0.7, 120, 2000
    per_prediction = 1e-6  # judge labels nearly free: the budget buys n human labels
    budget = n + (n + n_unlabelled) * per_prediction
    result = ppi_py.ppi_power(
        rho, cost_X=0, cost_Y=1.0, cost_Yhat=per_prediction, budget=budget, n_max=n + n_unlabelled
    )
    assert result["n"] == n and result["N"] == n_unlabelled
    variance = planning.rate_variance_ppi(rate=0.5, n_labelled=n, n_items=n + n_unlabelled, rho=rho)
    assert 0.25 / variance == pytest.approx(result["effective_n"], abs=1.0)


def test_single_rate_width_matches_ppi_mean_ci_on_simulated_data():
    rng = np.random.default_rng(1)
    rate, accuracy, n, n_unlabelled = 0.3, 0.9, 150, 3000
    widths = []
    for _ in range(200):
        y, yhat = _labels(rng, n, rate, accuracy)
        _, yhat_unlabelled = _labels(rng, n_unlabelled, rate, accuracy)
        low, high = ppi_py.ppi_mean_ci(y, yhat, yhat_unlabelled, alpha=0.05)
        widths.append(float(np.ravel(high)[0] - np.ravel(low)[0]))
    rho = planning.correlation_from_accuracy(accuracy, rate)
    variance = planning.rate_variance_ppi(
        rate=rate, n_labelled=n, n_items=n + n_unlabelled, rho=rho
    )
    assert np.mean(widths) == pytest.approx(2 * 1.959964 * math.sqrt(variance), rel=0.05)
    # Against the human-only width: close to √(1 − ρ²) when N ≫ n.
    human = planning.rate_variance_human(rate=rate, n_labelled=n)
    assert math.sqrt(variance / human) == pytest.approx(math.sqrt(1 - rho**2), abs=0.03)


def test_delta_width_matches_a_simulated_simultaneous_interval():
    """Two values at 0.2 and 0.8 (same p(1 − p)): Δ's interval from ppi_py's per-value intervals."""
    rng = np.random.default_rng(2)
    accuracy, n, n_unlabelled = 0.9, 80, 1500
    widths = []
    for _ in range(200):
        estimates, errors = [], []
        for rate in (0.2, 0.8):
            y, yhat = _labels(rng, n, rate, accuracy)
            _, yhat_unlabelled = _labels(rng, n_unlabelled, rate, accuracy)
            low, high = ppi_py.ppi_mean_ci(y, yhat, yhat_unlabelled, alpha=0.05)
            estimates.append((float(np.ravel(low)[0]) + float(np.ravel(high)[0])) / 2)
            errors.append((float(np.ravel(high)[0]) - float(np.ravel(low)[0])) / (2 * 1.959964))
        half = 1.959964 * math.hypot(*errors)  # one pair: no Bonferroni
        difference = abs(estimates[1] - estimates[0])
        widths.append((difference + half) - max(0.0, difference - half))
    rho = planning.correlation_from_accuracy(accuracy, 0.2)
    variance = planning.rate_variance_ppi(rate=0.2, n_labelled=n, n_items=n + n_unlabelled, rho=rho)
    assert np.mean(widths) == pytest.approx(planning.delta_width([variance, variance]), rel=0.05)


def test_delta_width_uses_bonferroni_over_the_pairs():
    assert planning.delta_width([0.01]) is None
    three = planning.delta_width([0.01, 0.01, 0.01])
    assert three == pytest.approx(2 * 2.393980 * math.sqrt(0.02), rel=1e-5)  # z at 1 − 0.05/6


def test_design_factor_is_one_for_equal_probabilities_and_kish_otherwise():
    assert planning.design_factor([0.2] * 10) == pytest.approx(1.0)
    pi = np.array([0.1] * 5 + [0.5] * 5)
    # n Σ(1/π) / N²: (3 × 60) / 100 = 1.8, the variance cost of unequal weights (Kish 1965).
    assert planning.design_factor(pi) == pytest.approx(1.8)


def test_budget_plan_rows_and_reasons():
    uniform = [0.1] * 100
    informative = np.r_[np.full(50, 0.02), np.full(50, 0.18)]
    uncertainty = np.r_[np.full(50, 0.05), np.full(50, 0.9)]
    values = {v: planning.ValueDesign(uniform, informative, uncertainty) for v in ("a", "b")}
    (row, single) = planning.budget_plan({"gender": values, "lonely": {"x": values["a"]}}, rho=0.8)
    assert row["attribute"] == "gender" and row["labelled"]["uniform"]["a"] == pytest.approx(10)
    assert row["ppi_uniform"] < row["human_uniform"]
    # Drawing where the judges are unsure helps when their errors are there, costs otherwise.
    assert row["ppi_validate"] < row["ppi_uniform"] < row["ppi_validate_flat"]
    assert single["ppi_uniform"] is None and "one attribute value" in single["reason"]


def test_design_factor_predicts_the_weighted_correction_under_the_validate_judge_design():
    """The informative column's model: residuals with variance ∝ uncertainty, drawn by the
    validate-the-judge design and weighted by 1/π (the PPI correction's Horvitz–Thompson mean).
    Its variance is g · mean(s) / n with g = design_factor(π, s); and below the uniform design's."""
    from annotations.policies import SampleItem, validate_judge_design

    rng = np.random.default_rng(4)
    n_items, budget = 200, 30
    uncertainty = rng.beta(0.6, 2.0, n_items)
    share = uncertainty / uncertainty.mean()
    items = [SampleItem(i, "one", float(u)) for i, u in enumerate(uncertainty)]
    pi = np.array(list(validate_judge_design(items, budget, rng).inclusion_probability.values()))
    corrections = []
    for _ in range(4000):
        drawn = np.array(validate_judge_design(items, budget, rng).chosen)
        residual = rng.normal(0.0, np.sqrt(share[drawn]))
        corrections.append(np.sum(residual / pi[drawn]) / n_items)
    predicted = planning.design_factor(pi, share) / budget
    assert np.var(corrections) == pytest.approx(predicted, rel=0.1)
    assert planning.design_factor(pi, share) < 1.0 < planning.design_factor(pi)

"""The power planner (scoring.stats.power_planning) against closed forms and plain simulations."""

import math

import numpy as np
import pytest
from scipy.stats import norm, studentized_range
from scipy.stats import t as student_t

from scoring.stats import power_planning as planning
from scoring.stats.ppi_planning import correlation_from_accuracy


def _two_values(**options):
    # Two values, 10 000 base prompts: df so large the band is the normal one.
    defaults = dict(items_per_value=200, n_values=2, clusters_per_value=200, labels_per_item=1)
    return planning.PowerDesign(**(defaults | options))


def test_two_values_match_the_closed_forms():
    """With two values the band is d ± z·se, so power, width and δ have closed forms."""
    design = _two_values(rate=0.3, confidence=0.95)
    plan = planning.power_plan(design, n_draws=200_000)["human"]
    df = design.clusters - 1
    c = student_t.isf(0.025, df)
    se = math.sqrt(2 * 0.3 * 0.7 / 200)
    assert plan["critical_value"] == pytest.approx(c, rel=0.01)
    assert plan["pair_width"] == pytest.approx(2 * c * se, rel=0.01)
    # δ: |d| + c·se < δ with probability 0.8 at Δ = 0 → δ = se (c + z_0.9).
    assert plan["certifiable_delta"] == pytest.approx(se * (c + norm.ppf(0.9)), rel=0.01)
    # Width at Δ = 0: E[(|d| + h) − max(0, |d| − h)] = h + E[min(|d|, h)].
    grid = np.linspace(0, 10, 200_001) * se
    density = 2 * norm.pdf(grid / se) / se
    expected = c * se + np.trapezoid(np.minimum(grid, c * se) * density, grid)
    assert plan["delta_width_at_zero"] == pytest.approx(expected, rel=0.01)
    # Power at Δ = 0.10 (the second value at 0.40, its own variance).
    se_alt = math.sqrt(0.3 * 0.7 / 200 + 0.4 * 0.6 / 200)
    power = norm.sf(c - 0.10 / se_alt) + norm.cdf(-c - 0.10 / se_alt)
    assert plan["power"]["0.1"] == pytest.approx(power, abs=0.01)


def test_critical_value_is_the_studentized_range_for_equal_variances():
    """Tukey's all-pairwise max-t with known, equal variances: q(V, ∞) / √2."""
    design = planning.PowerDesign(items_per_value=100, n_values=4, judge_accuracy=0.9)
    plan = planning.power_plan(design, n_draws=200_000)
    assert plan["ppi"]["critical_value"] == pytest.approx(
        studentized_range.ppf(0.95, 4, 1e4) / math.sqrt(2), rel=0.01
    )


def test_certifiable_delta_is_reached_with_eighty_percent():
    design = planning.PowerDesign(items_per_value=150, n_values=3, labels_per_item=2)
    delta = planning.power_plan(design)["human"]["certifiable_delta"]
    probability = planning.equivalence_probability(design, [0.5] * 3, delta, random_state=1)
    assert probability == pytest.approx(0.80, abs=0.01)
    # At true |Δ| = δ the band's upper bound is below δ at most α/2 of the time.
    at_margin = planning.equivalence_probability(design, [0.5, 0.5, 0.5 + delta], delta)
    assert at_margin <= 0.025


def test_vote_share_variance_matches_simulated_labels():
    rng = np.random.default_rng(3)
    true_rate, noise, k = 0.3, 0.1, 3
    state = rng.random(400_000) < true_rate
    labels = state[:, None] ^ (rng.random((state.size, k)) < noise)
    share = labels.mean(axis=1)
    rate = true_rate * (1 - 2 * noise) + noise
    assert planning.vote_share_variance(rate, labels_per_item=k, label_noise=noise) == (
        pytest.approx(share.var(), rel=0.02)
    )
    # Without noise, labels agree: k labels are worth one.
    assert planning.vote_share_variance(0.3, labels_per_item=5, label_noise=0.0) == (
        pytest.approx(0.21)
    )


def test_ppi_correlation_with_a_noisy_vote_share_matches_simulation():
    rng = np.random.default_rng(4)
    true_rate, noise, k, accuracy = 0.4, 0.1, 2, 0.85
    state = rng.random(400_000) < true_rate
    share = (state[:, None] ^ (rng.random((state.size, k)) < noise)).mean(axis=1)
    judge = state ^ (rng.random(state.size) > accuracy)
    design = planning.PowerDesign(
        items_per_value=1000,
        n_values=2,
        labels_per_item=k,
        label_noise=noise,
        judge_accuracy=accuracy,
        human_budget=2 * k * 100,
        rate=true_rate * (1 - 2 * noise) + noise,
    )
    variances = planning.value_variances(design, [design.rate] * 2)
    sigma2 = planning.vote_share_variance(design.rate, labels_per_item=k, label_noise=noise)
    rho = np.corrcoef(share, judge)[0, 1]
    n, big_n = 100, 1000
    assert variances["human"][0] == pytest.approx(sigma2 / n)
    assert variances["ppi"][0] == pytest.approx(
        sigma2 / n * ((1 - rho**2) + rho**2 * n / big_n), rel=0.02
    )


def test_every_item_labelled_makes_ppi_the_human_estimate():
    design = planning.PowerDesign(items_per_value=80, n_values=3, judge_accuracy=0.9)
    variances = planning.value_variances(design, [0.2, 0.3, 0.4])
    assert variances["ppi"] == pytest.approx(variances["human"])


def test_a_better_judge_narrows_ppi_and_a_differential_one_sits_between():
    base = dict(items_per_value=400, n_values=3, human_budget=2 * 3 * 60)
    widths = {
        label: planning.power_plan(planning.PowerDesign(**base, judge_accuracy=accuracy))["ppi"][
            "pair_width"
        ]
        for label, accuracy in (("good", 0.95), ("poor", 0.7), ("mixed", [0.95, 0.95, 0.7]))
    }
    human = planning.power_plan(planning.PowerDesign(**base))["human"]["pair_width"]
    assert widths["good"] < widths["mixed"] < widths["poor"] < human


def test_budget_sets_the_labelled_items_and_more_budget_more_power():
    small = planning.PowerDesign(items_per_value=500, n_values=4, human_budget=800)
    assert small.labelled_per_value == 100  # 800 labels / (2 labels × 4 values)
    large = planning.PowerDesign(items_per_value=500, n_values=4, human_budget=100_000)
    assert large.labelled_per_value == 500
    assert (
        planning.power_plan(large)["human"]["power"]["0.1"]
        > (planning.power_plan(small)["human"]["power"]["0.1"])
    )


def test_powers_rise_with_delta_and_plan_is_reproducible():
    design = planning.PowerDesign(items_per_value=200, n_values=4, judge_accuracy=0.9)
    plan = planning.power_plan(design)
    power = plan["human"]["power"]
    assert power["0.05"] < power["0.1"] < power["0.2"]
    assert planning.power_plan(design) == plan


def test_a_design_too_small_to_certify_any_margin_says_so():
    plan = planning.power_plan(planning.PowerDesign(items_per_value=3, n_values=6))["human"]
    assert plan["certifiable_delta"] is None
    assert "too small" in plan["certifiable_delta_reason"]
    assert plan["pair_width"] > 1


def test_too_small_a_budget_and_no_judge_give_reasons():
    plan = planning.power_plan(planning.PowerDesign(items_per_value=50, n_values=4, human_budget=8))
    assert plan["human"]["pair_width"] is None and "budget" in plan["human"]["reason"]
    plan = planning.power_plan(planning.PowerDesign(items_per_value=50, n_values=4))
    assert plan["ppi"]["certifiable_delta"] is None and "judge accuracy" in plan["ppi"]["reason"]
    assert plan["human"]["certifiable_delta"] is not None
    tiny = planning.PowerDesign(items_per_value=50, n_values=4, human_budget=8)
    with pytest.raises(ValueError, match="fewer than two labelled items"):
        planning.equivalence_probability(tiny, [0.5] * 4, 0.1)
    with pytest.raises(ValueError, match="judge_accuracy"):
        planning.equivalence_probability(
            planning.PowerDesign(items_per_value=50, n_values=4), [0.5] * 4, 0.1, source="ppi"
        )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (dict(items_per_value=1), "items_per_value"),
        (dict(n_values=1), "n_values"),
        (dict(generators=0), "generators"),
        (dict(labels_per_item=0), "labels_per_item"),
        (dict(clusters_per_value=1), "clusters_per_value"),
        (dict(clusters_per_value=500), "clusters_per_value"),
        (dict(human_budget=-1), "human_budget"),
        (dict(rate=1.0), "rate"),
        (dict(label_noise=0.5), "label_noise"),
        (dict(label_noise=0.3, rate=0.2), "rate must lie between"),
        (dict(confidence=1.0), "confidence"),
        (dict(judge_accuracy=1.2), "judge_accuracy"),
        (dict(judge_accuracy=[0.9, 0.8]), "judge_accuracy has 2 values"),
    ],
)
def test_bad_designs_are_refused_with_the_parameter_named(options, message):
    design = planning.PowerDesign(**(dict(items_per_value=100, n_values=3) | options))
    with pytest.raises(ValueError, match=message):
        planning.power_plan(design)


def test_bad_plan_options_are_refused():
    design = planning.PowerDesign(items_per_value=100, n_values=3)
    with pytest.raises(ValueError, match="Δ to detect"):
        planning.power_plan(design, deltas=(0.0,))
    with pytest.raises(ValueError, match="certify_probability"):
        planning.power_plan(design, certify_probability=1.0)


def test_correlation_reduces_to_ppi_planning_without_label_noise():
    design = planning.PowerDesign(
        items_per_value=1000, n_values=2, judge_accuracy=0.8, human_budget=400, rate=0.3
    )
    rho = correlation_from_accuracy(0.8, 0.3)
    n = 100
    expected = 0.21 / n * ((1 - rho**2) + rho**2 * n / 1000)
    assert planning.value_variances(design, [0.3, 0.3])["ppi"][0] == pytest.approx(expected)

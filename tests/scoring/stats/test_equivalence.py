"""Equivalence within δ (scoring.stats.equivalence) against plain computations and edge cases."""

import math

import numpy as np
import pytest

from scoring.stats import equivalence as eq


def _hand_intervals(point, boot, confidence=0.95):
    """Every pairwise interval d ± c·se by a plain loop: c the (B − ⌈αB⌉ + 1)-th smallest
    max-t over the B resamples, α = 1 − confidence (docs/metrics.md, "Δ interval")."""
    k = len(point)
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    diffs = [point[i] - point[j] for i, j in pairs]
    resampled = [[row[i] - row[j] for i, j in pairs] for row in boot]
    ses = [float(np.std([r[p] for r in resampled], ddof=1)) for p in range(len(pairs))]
    t_max = sorted(max(abs(r[p] - diffs[p]) / ses[p] for p in range(len(pairs))) for r in resampled)
    c = t_max[len(boot) - math.ceil(round((1 - confidence) * len(boot), 9))]
    return [(d - c * s, d + c * s) for d, s in zip(diffs, ses, strict=True)]


def _hand_verdict(intervals, delta):
    if all(-delta < low and high < delta for low, high in intervals):
        return eq.EQUIVALENT
    if any(low > 0 or high < 0 for low, high in intervals):
        return eq.DISPARITY
    return eq.INCONCLUSIVE


@pytest.mark.parametrize(
    ("rates", "spread", "delta"),
    [
        ((0.30, 0.31, 0.30), 0.004, 0.05),  # tight and equal: equivalent
        ((0.30, 0.45, 0.30), 0.01, 0.05),  # far apart: disparity
        ((0.30, 0.32, 0.31), 0.03, 0.05),  # wide: inconclusive
        ((0.30, 0.32, 0.31), 0.03, 0.20),  # the same, certified at a wider margin
        ((0.30, 0.33), 0.005, 0.10),  # a small disparity inside δ: equivalent (the claim holds)
    ],
)
def test_verdict_matches_a_plain_loop_over_the_pairwise_intervals(rates, spread, delta):
    rng = np.random.default_rng(7)
    point = np.asarray(rates)
    boot = point + rng.normal(0.0, spread, size=(400, point.size))
    intervals = _hand_intervals(list(point), boot.tolist())
    entry = eq.equivalence_from_rates(point, boot, delta_margin=delta, n_resamples=400)
    assert entry["verdict"] == _hand_verdict(intervals, delta)
    hand_bound = max(max(abs(low), abs(high)) for low, high in intervals)
    assert entry["max_abs_bound"] == pytest.approx(hand_bound, abs=1e-12)
    assert entry["delta_margin"] == delta
    assert set(entry) == {"delta_margin", "verdict", "max_abs_bound", "method"}


def test_the_parametrised_cases_reach_every_verdict():
    rng = np.random.default_rng(7)
    seen = set()
    for rates, spread, delta in [
        ((0.30, 0.31, 0.30), 0.004, 0.05),
        ((0.30, 0.45, 0.30), 0.01, 0.05),
        ((0.30, 0.32, 0.31), 0.03, 0.05),
    ]:
        point = np.asarray(rates)
        boot = point + rng.normal(0.0, spread, size=(400, point.size))
        seen.add(
            eq.equivalence_from_rates(point, boot, delta_margin=delta, n_resamples=400)["verdict"]
        )
    assert seen == set(eq.VERDICTS)


@pytest.mark.parametrize(
    ("low", "high", "delta", "verdict"),
    [
        (0.0, 0.049, 0.05, eq.EQUIVALENT),
        (0.0, 0.05, 0.05, eq.INCONCLUSIVE),  # a bound at δ is not inside the open (−δ, δ)
        (0.01, 0.03, 0.05, eq.EQUIVALENT),  # shown, but within δ
        (0.01, 0.08, 0.05, eq.DISPARITY),
        (0.0, 0.20, 0.05, eq.INCONCLUSIVE),
    ],
)
def test_entry_reads_the_exported_delta_block(low, high, delta, verdict):
    block = {"delta_ci_low": low, "delta_ci_high": high, "delta_p_value": 0.5}
    entry = eq.equivalence_entry(block, delta_margin=delta)
    assert entry["verdict"] == verdict
    assert entry["max_abs_bound"] == high
    # The prediction-powered Δ block has unprefixed bounds.
    assert (
        eq.equivalence_entry({"ci_low": low, "ci_high": high}, delta_margin=delta, prefix="")[
            "verdict"
        ]
        == verdict
    )


def test_null_interval_gives_a_null_verdict_with_its_reason():
    block = {
        "delta_ci_low": None,
        "delta_ci_high": None,
        "delta_ci_reason": "every domain has a single base prompt …",
        "delta_ci_reason_code": "one_cluster_per_stratum",
    }
    entry = eq.equivalence_entry(block)
    assert entry["verdict"] is None and entry["max_abs_bound"] is None
    assert entry["reason_code"] == "one_cluster_per_stratum"
    assert entry["reason"].startswith("every domain")
    # A PPI Δ whose estimate itself is undefined carries ``reason`` only.
    ppi = {"estimate": None, "reason": "one value", "ci_low": None, "ci_high": None}
    entry = eq.equivalence_entry(ppi, prefix="")
    assert entry["verdict"] is None and entry["reason"] == "one value"
    assert entry["reason_code"] == "undefined_estimate"


def test_undefined_intervals_from_rates():
    point = np.array([0.2, 0.2])
    # No resamples: no interval, no verdict.
    entry = eq.equivalence_from_rates(point, None, n_resamples=0)
    assert entry["verdict"] is None and entry["reason_code"] == "no_resamples"
    # Resamples without spread (every rate 0): zero width, no verdict, never "equivalent".
    zero = np.zeros(2)
    entry = eq.equivalence_from_rates(zero, np.zeros((50, 2)), n_resamples=50)
    assert entry["verdict"] is None and entry["reason_code"] == "zero_width"
    # One value: Δ needs two.
    entry = eq.equivalence_from_rates([0.3], np.full((50, 1), 0.3), n_resamples=50)
    assert entry["verdict"] is None


@pytest.mark.parametrize("delta", [0, 1, -0.1, 1.5, math.nan, math.inf, "0.05", None, True])
def test_margin_outside_zero_one_is_refused(delta):
    with pytest.raises(ValueError, match="margin δ"):
        eq.equivalence_entry({"delta_ci_low": 0.0, "delta_ci_high": 0.01}, delta_margin=delta)


def test_confidence_is_checked():
    with pytest.raises(ValueError, match="confidence"):
        eq.equivalence_from_rates([0.1, 0.2], np.zeros((5, 2)), n_resamples=5, confidence=1.0)


def test_default_margin_is_five_points():
    entry = eq.equivalence_entry({"delta_ci_low": 0.0, "delta_ci_high": 0.04})
    assert entry["delta_margin"] == 0.05 and entry["verdict"] == eq.EQUIVALENT


def test_verdicts_from_the_study_exports_own_delta_blocks():
    """The human block of ``rates.human.refusal.<attribute>`` (``study_rates``) and the PPI block
    of ``ppi.<judge>.refusal.delta.<attribute>`` (``judge_outcome_ppi``) give verdicts that agree
    with their own Δ intervals: a large study with equal rates certifies a wide δ, far-apart rates
    show a disparity."""
    from scoring.stats.validity import human_scenarios, ppi_scenarios

    rng = np.random.default_rng(11)
    equal = human_scenarios.HumanDesign(300, 1, rates=(0.3, 0.3), prompt_shift=0.0)
    block = human_scenarios.human_refusal_block(
        human_scenarios.simulate_annotations(equal, rng), 200, 1
    )
    entry = eq.equivalence_entry(block, delta_margin=0.2)
    assert entry["verdict"] == eq.EQUIVALENT
    assert entry["max_abs_bound"] == block["delta_ci_high"] < 0.2
    apart = human_scenarios.HumanDesign(300, 1, rates=(0.1, 0.6), prompt_shift=0.0)
    block = human_scenarios.human_refusal_block(
        human_scenarios.simulate_annotations(apart, rng), 200, 1
    )
    assert eq.equivalence_entry(block)["verdict"] == eq.DISPARITY

    study = ppi_scenarios._simulate(300, np.array([0.3, 0.3, 0.3, 0.3]), "unbiased", rng)
    ppi = ppi_scenarios._ppi(ppi_scenarios._items(study), 200, rng)
    delta = ppi["delta"][ppi_scenarios.ATTRIBUTE]
    entry = eq.equivalence_entry(delta, delta_margin=0.2, prefix="")
    assert entry["verdict"] == eq.EQUIVALENT and entry["max_abs_bound"] == delta["ci_high"]


def test_the_section_reads_every_delta_of_a_study_export_by_hand():
    """``equivalence_section`` over a whole study export: one entry per Δ of ``rates`` and per
    PPI Δ (source ``ppi:<judge>``), each outcome against its own margin, every verdict the plain
    reading of its interval."""
    from scoring.stats import study_metrics
    from scoring.stats.synthetic_study import synthetic_study

    annotations, judgments = synthetic_study(n_items=600, n_annotated_items=200, seed=1)
    metrics = study_metrics(annotations, judgments, n_resamples=200, seed=0)
    margins = {"erasure": 0.3}
    section = eq.equivalence_section(metrics["rates"], metrics["ppi"], margins=margins)
    blocks = [
        (source, outcome, attribute, block, "delta_")
        for source, outcomes in metrics["rates"].items()
        for outcome, attributes in outcomes.items()
        for attribute, block in attributes.items()
    ] + [
        (f"ppi:{judge}", outcome, attribute, block, "")
        for judge, outcomes in metrics["ppi"].items()
        for outcome, result in outcomes.items()
        for attribute, block in result["delta"].items()
    ]
    defined = 0
    for source, outcome, attribute, block, prefix in blocks:
        entry = section[source][outcome][attribute]
        margin = margins.get(outcome, eq.DEFAULT_DELTA_MARGIN)
        assert entry["delta_margin"] == margin
        low, high = block.get(f"{prefix}ci_low"), block.get(f"{prefix}ci_high")
        if low is None or high is None:
            assert entry["verdict"] is None and entry["reason_code"]
            continue
        plain = eq.EQUIVALENT if high < margin else eq.DISPARITY if low > 0 else eq.INCONCLUSIVE
        assert (entry["verdict"], entry["max_abs_bound"]) == (plain, high)
        defined += 1
    assert defined > 50
    assert sum(len(a) for o in section.values() for a in o.values()) == len(blocks)

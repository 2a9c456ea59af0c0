"""The model-comparison and frontier scenarios in quick mode (200 replications): with two labels
per item every rate change keeps its size and coverage in both designs, the Δ change covers,
and the frontier's intervals cover (docs/metrics.md, "Models side by side" and "Safety–utility
trade-off")."""

import pytest

from scoring.stats.validity.comparison_scenarios import SCENARIOS
from scoring.stats.validity.core import QUICK_REPLICATIONS, QUICK_TARGETS


@pytest.fixture(scope="module")
def checks():
    return {name: run(QUICK_REPLICATIONS, 20261127) for name, run in SCENARIOS.items()}


def test_every_check_meets_the_quick_targets(checks):
    failing = [
        check.to_dict()
        for scenario in checks.values()
        for check in scenario
        if not check.passes(QUICK_TARGETS)
    ]
    assert not failing
    assert all(scenario for scenario in checks.values())


def test_every_scenario_measured_what_it_names(checks):
    for name, scenario in checks.items():
        statistics = {check.statistic for check in scenario}
        if name.startswith("frontier"):
            assert {"over_refusal_ci", "under_refusal_ci", "overall_over_refusal_ci"} <= statistics
        else:
            assert {"rate_ci", "rate_test", "delta_ci"} <= statistics
            if "identical" in name:
                assert "delta_test" in statistics
        assert all(check.undefined == 0 for check in scenario), name


def test_only_the_delta_change_is_conservative(checks):
    """Coverage above 0.985 only where docs/metrics.md says why (the Δ change's bound)."""
    for scenario in checks.values():
        for check in scenario:
            if check.kind == "coverage" and check.rate > 0.985:
                assert check.conservative_by_design, check.to_dict()

"""The human-label scenarios in quick mode (200 replications): every rate, Δ and ratio interval
keeps its coverage and every test its size with one or two annotators per item, label noise,
base-prompt clusters and 11 to 200 items per value (docs/metrics.md, "Calibration")."""

import pytest

from scoring.stats.validity.core import QUICK_REPLICATIONS, QUICK_TARGETS, failing
from scoring.stats.validity.human_scenarios import SCENARIOS


@pytest.fixture(scope="module")
def checks():
    return {name: run(QUICK_REPLICATIONS, 20261128) for name, run in SCENARIOS.items()}


def test_every_check_meets_the_quick_targets(checks):
    assert not failing([check for scenario in checks.values() for check in scenario], QUICK_TARGETS)


def test_every_null_scenario_measures_the_tests_it_names(checks):
    for name, scenario in checks.items():
        measured = {check.statistic for check in scenario if check.replications}
        assert {"rate_ci", "delta_ci"} <= measured, name
        if "Δ=0 " in f"{name} " or name.endswith("Δ=0"):
            assert {"delta_test", "pairwise_test", "pairwise_holm"} <= measured, name


def test_the_delta_test_has_power_where_the_truth_differs(checks):
    power = [
        check.extra["power_delta_test"]
        for name, scenario in checks.items()
        if "Δ=0.15" in name
        for check in scenario
        if check.statistic == "delta_ci"
    ]
    assert power and max(power) > 0.5  # n = 200 per value

"""The judge-error scenarios in quick mode (200 replications): the differential-error flag and
its FNR and FPR tests keep their size for a fair judge at different prevalences, and the flag
finds a real FNR gap (docs/metrics.md, "Judge error by group")."""

import pytest

from scoring.stats.validity.core import QUICK_REPLICATIONS, QUICK_TARGETS, failing
from scoring.stats.validity.judge_scenarios import SCENARIOS


@pytest.fixture(scope="module")
def checks():
    return {name: run(QUICK_REPLICATIONS, 20261127) for name, run in SCENARIOS.items()}


def test_every_check_meets_the_quick_targets(checks):
    assert not failing([check for scenario in checks.values() for check in scenario], QUICK_TARGETS)
    assert all(scenario for scenario in checks.values())


def test_the_replaced_overall_error_test_would_fire_where_the_flag_keeps_its_size(checks):
    for name, scenario in checks.items():
        flag = [check for check in scenario if check.statistic == "flag"]
        if "non-differential" in name:
            assert flag and flag[0].extra["overall_error_test_rejection_rate"] > 0.5


def test_the_flag_finds_a_real_fnr_gap_and_its_power_figure_agrees(checks):
    power = {
        name: next(c for c in scenario if c.statistic == "fpr_test").extra
        for name, scenario in checks.items()
        if "FNR" in name
    }
    small, large = power["judge n=240 FNR 0.2/0.2/0.45"], power["judge n=960 FNR 0.2/0.2/0.45"]
    assert 0.3 < small["power_flag"] < large["power_flag"]
    # At 960 labels the reported detectable gap is below the true 0.25, and the flag finds it.
    assert large["mean_min_detectable_fnr_difference"] < large["true_fnr_difference"]
    assert large["power_flag"] > 0.8
    # At 240 it is above: the report warns that a 0.25 gap would often be missed.
    assert small["mean_min_detectable_fnr_difference"] > small["true_fnr_difference"]

"""The PPI validity scenarios in quick mode (200 replications, 300 bootstrap resamples each):
every check meets the quick targets (docs/metrics.md, "Prediction-powered rates", "Calibration")."""

import pytest
from threadpoolctl import threadpool_limits

from scoring.stats.validity.core import QUICK_REPLICATIONS
from scoring.stats.validity.ppi_scenarios import SCENARIOS
from tests.scoring.stats.validity.conftest import quick_checks


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_quick_scenario_meets_the_quick_targets(name):
    quick_checks(SCENARIOS[name])


def test_the_judge_bias_warning_has_power_against_a_differential_judge():
    with threadpool_limits(limits=1):
        (check, *_) = SCENARIOS["ppi_judge_bias_n60"](QUICK_REPLICATIONS, 0)
    assert check.extra["power_differential_judge"] >= 0.7

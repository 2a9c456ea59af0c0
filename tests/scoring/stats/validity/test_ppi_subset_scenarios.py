"""The subset-batch PPI scenario in quick mode (200 replications): with the "judges disagree"
batch's labels left out, the PPI rate meets the quick targets (docs/metrics.md,
"Prediction-powered rates"), and the figures from before the fix show what it fixed."""

import pytest

from scoring.stats.validity.ppi_subset_scenarios import SCENARIOS
from tests.scoring.stats.validity.conftest import quick_checks


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_quick_scenario_meets_the_quick_targets(name):
    (check,) = quick_checks(SCENARIOS[name])
    # Before, the subset's π = 1 labels biased the rate upward (the judge misses refusals there).
    assert check.extra["mean_bias_before"] > 0.04 and abs(check.extra["mean_bias"]) < 0.01

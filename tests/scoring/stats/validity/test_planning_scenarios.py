"""The planner and equivalence scenarios in quick mode (200 replications): the plan's widths,
power and 80 % certification probability agree with simulated studies, and "equivalent within
δ" is declared at most α of the time when the true |Δ| is δ (docs/metrics.md, "Planning power",
"Equivalence within δ")."""

import pytest

from scoring.stats.validity.planning_scenarios import SCENARIOS
from scoring.stats.validity.suite import SCENARIO_MODULES
from tests.scoring.stats.validity.conftest import quick_checks


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_quick_scenario_meets_the_quick_targets(name):
    checks = {check.statistic: check for check in quick_checks(SCENARIOS[name])}
    for source in ("human", "ppi"):
        assert checks[f"{source}_equivalence_at_margin"].replications == 200
        for figure in ("pair_width", "delta_width", "power", "certified"):
            extra = checks[f"{source}_{figure}_plan"].extra
            assert extra["simulated"] > 0 and extra["planned"] > 0
        # Widths average hundreds of studies: they are held to 10 % without Monte Carlo slack.
        assert checks[f"{source}_pair_width_plan"].extra["relative_error"] <= 0.10


def test_the_suite_runs_the_planning_scenarios():
    assert "planning_scenarios" in SCENARIO_MODULES

"""The REFLECT validity scenario in its quick mode: every interval of a demo-sized study keeps
its coverage (docs/metrics.md, "REFLECT: intervals"). About a minute on a 2-core machine."""

from __future__ import annotations

import pytest

from scoring.stats.validity.core import QUICK_REPLICATIONS, QUICK_TARGETS
from scoring.stats.validity.reflect_scenarios import SCENARIOS


@pytest.fixture(scope="module")
def checks():
    return SCENARIOS["reflect demo size"](QUICK_REPLICATIONS, 0)


def test_every_reflect_interval_keeps_its_quick_coverage(checks):
    # every win rate, Pol, Ext, JSD, mean gap and salary gap (reference groups, at 0 by
    # definition, are not estimates)
    assert len(checks) > 180
    failing = [c.to_dict() for c in checks if not c.passes(QUICK_TARGETS)]
    assert failing == []


def test_the_biased_statistics_are_marked_conservative(checks):
    conservative = {c.statistic for c in checks if c.conservative_by_design}
    assert "2afc.income.pol" in conservative and "mcq.salary.jsd.race.Latino" in conservative
    assert not any(".win_rate." in name for name in conservative)

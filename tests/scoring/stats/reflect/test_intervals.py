"""Every interval of a demo-sized REFLECT report holds its own estimate (docs/metrics.md,
"REFLECT: intervals"): the audit of issue 30 found Pol, Ext and JSD intervals above them."""

from __future__ import annotations

import json

import numpy as np
import pytest

from scoring.stats.interval_checks import count_intervals, intervals_excluding_estimate
from scoring.stats.reflect.report import reflect_model_report
from scoring.stats.validity.reflect_scenarios import DemoStudy


@pytest.fixture(scope="module")
def demo_report():
    """The demo's size and script (``make demo``), at the staff page's 1,000 resamples."""
    two_afc, mcq, salary = DemoStudy().answers(np.random.default_rng(7))
    return reflect_model_report(two_afc, mcq, salary, n_resamples=1000, rng=0)


def test_no_interval_of_the_demo_report_excludes_its_estimate(demo_report):
    json.dumps(demo_report, allow_nan=False)
    assert count_intervals(demo_report) > 100
    assert intervals_excluding_estimate(demo_report) == []

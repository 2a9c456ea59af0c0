"""The one rule every interval obeys: it holds its own point estimate."""

import importlib

import pytest

from scoring.stats.interval_checks import (
    count_intervals,
    holds_estimate,
    intervals_excluding_estimate,
)
from scoring.stats.result import interval_block


@pytest.mark.parametrize(
    "estimate, low, high, expected",
    [
        (0.3, 0.2, 0.4, True),
        (0.2, 0.2, 0.4, True),
        (0.278, 0.284, 0.395, False),  # the demo REFLECT polarization of issue 30
        (0.5, 0.1, 0.4, False),
        (None, 0.1, 0.4, True),  # nothing to check
        (0.3, None, None, True),
        (0.4 + 1e-12, 0.1, 0.4, True),  # rounding slack
    ],
)
def test_holds_estimate(estimate, low, high, expected):
    assert holds_estimate(estimate, low, high) is expected


def test_scan_finds_every_shape():
    document = {
        "rates": {"culture": {"values": {"US": {"rate": 0.1, "ci_low": 0.2, "ci_high": 0.3}}}},
        "delta": 0.2,
        "delta_ci_low": 0.05,
        "delta_ci_high": 0.4,
        "ratio": 1.5,
        "ratio_ci_low": 1.6,
        "ratio_ci_high": 2.0,
        "pol": 0.278,
        "pol_ci": [0.284, 0.395],
        "win_rate": {"race": {"White": 0.6, "Black": 0.4}},
        "win_rate_ci": {"race": {"White": [0.55, 0.65], "Black": [0.45, 0.5]}},
        "rows": [{"estimate": 0.1, "ci_low": 0.0, "ci_high": 0.2}],
    }
    paths = [row["path"] for row in intervals_excluding_estimate(document)]
    assert paths == [
        "ratio",
        "pol",
        "win_rate.race.Black",
        "rates.culture.values.US.rate",
    ]
    assert count_intervals(document) == 7


def test_interval_block_withholds_an_interval_that_excludes_its_estimate():
    block = interval_block(lambda: (0.284, 0.395, 100), n_resamples=100, estimate=0.278)
    assert block["ci_low"] is None and block["ci_high"] is None
    assert block["ci_reason_code"] == "excludes_estimate"
    kept = interval_block(lambda: (0.2, 0.395, 100), n_resamples=100, estimate=0.278)
    assert kept == {"ci_low": 0.2, "ci_high": 0.395}


def test_krippendorff_alpha_withholds_an_interval_that_excludes_alpha(monkeypatch):
    # ``scoring.stats.krippendorff_alpha`` is the function (the package's public face); the
    # module is reached by its import path.
    krippendorff_alpha = importlib.import_module("scoring.stats.krippendorff_alpha")

    monkeypatch.setattr(krippendorff_alpha, "_bootstrap", lambda *args: (0.95, 0.99, 100))
    labels = [0, 1, 0, 1, 1, 0, 0, 1] + [0, 1, 1, 1, 1, 0, 0, 0]
    items = list(range(8)) * 2
    raters = ["a"] * 8 + ["b"] * 8
    stat = krippendorff_alpha.krippendorff_alpha(items, raters, labels, n_resamples=100)
    assert stat.ci_low is None and stat.extra["ci_reason_code"] == "excludes_estimate"

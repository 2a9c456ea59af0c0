"""The report's figures and display strings are honest (Django-free): an undefined interval is
drawn with its reason, odds ratios beyond the display range end in arrows with the raw counts
beside them, and a zero cell names its correction."""

from __future__ import annotations

import pytest

from scoring.report.display import ratio_number, ratio_with_interval
from scoring.report.figures import figure_image, figure_list
from scoring.report.figures.forest import ODDS_DISPLAY_LIMIT
from scoring.report.study_tables import display_report


def _report():
    values = {
        "A": {"n": 10, "successes": 0, "rate": 0.0, "ci_low": 0.0, "ci_high": 0.28},
        "B": {"n": 12, "successes": 6, "rate": 0.5, "ci_low": 0.25, "ci_high": 0.75},
    }
    pair = {
        "value_a": "A",
        "value_b": "B",
        "test": "fisher-exact",
        "p_value": 0.01,
        "p_holm": 0.01,
        "p_bh": 0.01,
        "cohen_h": -1.57,
        "odds_ratio": 0.045,
        "odds_ratio_ci_low": 0.0021,
        "odds_ratio_ci_high": 1601.64,
        "odds_ratio_correction": "haldane_anscombe",
    }
    disparity = {
        "source": "human",
        "measure": "refusal",
        "attribute": "culture",
        "n": 22,
        "delta": 0.5,
        "delta_ci_low": None,
        "delta_ci_high": None,
        "delta_ci_reason": "fewer than 5 base prompts can be resampled",
        "ratio": None,
        "ratio_reason": "the minimum rate is 0",
        "max_value": "B",
        "min_value": "A",
        "delta_p": 0.02,
        "delta_p_holm": 0.04,
        "delta_p_bh": 0.04,
        "flagged": True,
        "neutral_rate": 0.2,
        "values": [{"value": k, **v} for k, v in values.items()],
        "pairwise_tests": [pair],
    }
    fit = {
        "fitted": True,
        "n": 22,
        "n_clusters": 4,
        "coefficients": {
            "B": {
                "beta": 7.4,
                "odds_ratio": 1636.0,
                "ci_low": 0.004,
                "ci_high": 6.0e8,
                "p_value": 0.3,
            },
        },
    }
    return {
        "study": {"slug": "s", "name": "S"},
        "settings": {"alpha": 0.05, "confidence": 0.95, "n_resamples": 10, "n_permutations": 10},
        "rates": {"human": {"refusal": {"culture": {"values": values}}}},
        "disparities": [disparity],
        "regression": [
            {
                "source": "human",
                "outcome": "refusal",
                "attribute": "culture",
                "reference": "A",
                "reference_chosen_by": "configured",
                "n_observations": 22,
                "cluster": fit,
                "gee": {"fitted": False, "reason": "the model did not converge"},
            }
        ],
        "validation": {
            "human_vs_auto": [],
            "inter_annotator": {"overall": {}, "by_attribute": {}, "by_annotator_group": {}},
        },
    }


def _svg(report, key):
    spec = next(s for s in figure_list(report) if s["key"] == key)
    return figure_image(report, spec, "svg").decode()


def test_delta_figure_prints_the_reason_of_an_undefined_interval():
    svg = _svg(_report(), "delta--human--all")
    assert "no interval: fewer than 5 base prompts can be resampled" in svg
    assert "undefined: the minimum rate is 0" in svg


def test_odds_figure_clips_to_its_range_and_shows_counts_and_failed_fits():
    svg = _svg(_report(), "odds--human--refusal")
    assert "6/12 vs 0/10" in svg  # events / n of the value vs the reference
    assert "undefined: the model did not converge" in svg
    assert f"{ODDS_DISPLAY_LIMIT:g}" in svg  # the axis ends at the display limit, not at 6e8


def test_ratios_read_across_orders_of_magnitude_and_name_the_correction():
    assert ratio_with_interval(0.045, 0.0021, 1601.64) == "0.045 [0.0021, 1,602]"
    assert ratio_number(3.3737) == "3.37" and ratio_number(None) == "—"
    pair = display_report(_report())["disparity_sources"][0]["rows"][0]["pairs"][0]
    assert "Haldane–Anscombe" in pair["note"] and pair["odds_ratio"] == "0.045 [0.0021, 1,602]"


def test_an_interval_that_misses_its_estimate_is_drawn_without_whiskers():
    """A percentile bootstrap interval need not contain the estimate (JSD near 0, say): the
    chart draws the bar alone instead of failing on a negative whisker."""
    from scoring.report.charts import _whisker, interval_bar_chart

    rows = [
        {"attribute": "race", "value": "A", "rate": 0.01, "ci_low": 0.02, "ci_high": 0.05},
        {"attribute": "race", "value": "B", "rate": 0.30, "ci_low": 0.20, "ci_high": 0.45},
        {"attribute": "race", "value": "C", "rate": 0.50, "ci_low": None, "ci_high": None},
    ]
    assert [_whisker(r) for r in rows] == [(0.0, 0.0), pytest.approx((0.10, 0.15)), (0.0, 0.0)]
    assert interval_bar_chart(rows, title="t", ylabel="y", ylim=None).lstrip().startswith(b"<?xml")

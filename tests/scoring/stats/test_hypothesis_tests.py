"""Pairwise tests and effect sizes against scipy and statsmodels."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chi2_contingency, fisher_exact
from statsmodels.stats.contingency_tables import Table2x2
from statsmodels.stats.multitest import multipletests

from scoring.stats.hypothesis_tests import (
    benjamini_hochberg_adjust,
    cohen_h,
    holm_adjust,
    minimum_detectable_h,
    odds_ratio,
    pairwise_proportion_tests,
    two_proportion_test,
)


def test_large_cells_use_chi_square_matching_scipy():
    stat = two_proportion_test(40, 100, 25, 100)
    statistic, p_value, _, _ = chi2_contingency([[40, 60], [25, 75]], correction=False)
    assert stat.extra["test"] == "chi-square"
    assert stat.value == pytest.approx(p_value) and stat.extra["statistic"] == pytest.approx(
        statistic
    )


def test_small_cells_use_fisher_matching_scipy():
    stat = two_proportion_test(1, 12, 6, 10)
    assert stat.extra["test"] == "fisher-exact"
    assert stat.value == pytest.approx(fisher_exact([[1, 11], [6, 4]])[1])


def test_degenerate_tables():
    assert two_proportion_test(0, 10, 0, 12).value == 1.0
    assert two_proportion_test(0, 0, 3, 10).value is None


# multipletests runs gc.collect() on every Holm call, so keep the example count modest.
@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=30))
def test_holm_and_bh_match_multipletests(p_values):
    np.testing.assert_allclose(holm_adjust(p_values), multipletests(p_values, method="holm")[1])
    np.testing.assert_allclose(
        benjamini_hochberg_adjust(p_values), multipletests(p_values, method="fdr_bh")[1]
    )


@settings(max_examples=30, deadline=None)
@given(st.lists(st.one_of(st.floats(0, 1), st.just(float("nan"))), min_size=1, max_size=30))
def test_nan_p_values_are_left_out_of_the_family(p_values):
    p_values = np.array(p_values)
    defined = ~np.isnan(p_values)
    for adjust, method in ((holm_adjust, "holm"), (benjamini_hochberg_adjust, "fdr_bh")):
        adjusted = adjust(p_values)
        assert np.isnan(adjusted[~defined]).all()
        if defined.any():
            np.testing.assert_allclose(
                adjusted[defined], multipletests(p_values[defined], method=method)[1]
            )


def test_nan_example_from_the_issue():
    np.testing.assert_allclose(holm_adjust([0.01, np.nan, 0.04]), [0.02, np.nan, 0.04])
    np.testing.assert_allclose(
        benjamini_hochberg_adjust([0.01, np.nan, 0.04]), [0.02, np.nan, 0.04]
    )


def test_benjamini_hochberg_1995_worked_example():
    # Benjamini & Hochberg (1995), JRSS B 57(1), section 4: 15 p-values; at level 0.05 the
    # step-up procedure rejects 4 hypotheses and Holm's step-down procedure 3.
    p_values = [0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459]
    p_values += [0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.000]
    assert int((benjamini_hochberg_adjust(p_values) <= 0.05).sum()) == 4
    assert int((holm_adjust(p_values) <= 0.05).sum()) == 3


def test_pairwise_family_is_adjusted_together():
    rows = pairwise_proportion_tests({"a": (30, 100), "b": (10, 100), "c": (12, 100)})
    assert [(r["value_a"], r["value_b"]) for r in rows] == [("a", "b"), ("a", "c"), ("b", "c")]
    raw = [r["p_value"] for r in rows]
    assert [r["p_holm"] for r in rows] == pytest.approx(multipletests(raw, method="holm")[1])
    assert [r["p_bh"] for r in rows] == pytest.approx(multipletests(raw, method="fdr_bh")[1])


def test_odds_ratio_matches_statsmodels_woolf():
    table = Table2x2(np.array([[20, 80], [10, 90]]))
    stat = odds_ratio(20, 80, 10, 90)
    assert stat.value == pytest.approx(table.oddsratio)
    low, high = table.oddsratio_confint()
    assert (stat.ci_low, stat.ci_high) == (pytest.approx(low), pytest.approx(high))
    assert stat.extra["haldane_correction"] is False


def test_odds_ratio_haldane_correction_hand_worked():
    # [[0, 10], [5, 5]] + 0.5 -> (0.5 * 5.5) / (10.5 * 5.5) = 0.047619...; SE = sqrt(1/0.5 + 1/10.5 + 2/5.5)
    stat = odds_ratio(0, 10, 5, 5)
    assert stat.extra["haldane_correction"] is True
    assert stat.value == pytest.approx(0.5 / 10.5)
    assert stat.extra["log_standard_error"] == pytest.approx(math.sqrt(2 + 1 / 10.5 + 2 / 5.5))
    assert odds_ratio(0, 0, 3, 4).value is None


@pytest.mark.parametrize("cells", [(0, 10, 5, 5), (3, 0, 4, 9), (7, 2, 0, 1), (4, 6, 8, 0)])
def test_odds_ratio_zero_cell_equals_statsmodels_on_the_haldane_corrected_table(cells):
    # The reference computation on the table with 0.5 added to every cell (Haldane 1956,
    # Anscombe 1956). statsmodels' own default shift_zeros replaces only the zero cells by 0.5,
    # so it is asked not to shift here.
    table = Table2x2(np.array(cells, dtype=float).reshape(2, 2) + 0.5, shift_zeros=False)
    stat = odds_ratio(*cells)
    assert stat.value == pytest.approx(table.oddsratio)
    low, high = table.oddsratio_confint()
    assert (stat.ci_low, stat.ci_high) == (pytest.approx(low), pytest.approx(high))


def test_cohen_h_hand_worked():
    assert cohen_h(0.5, 0.5).value == 0.0
    assert cohen_h(0.167, 0.036).value == pytest.approx(
        2 * math.asin(math.sqrt(0.167)) - 2 * math.asin(math.sqrt(0.036))
    )
    assert cohen_h(None, 0.1).value is None


@given(st.integers(1, 50), st.integers(1, 50), st.integers(1, 50), st.integers(1, 50))
def test_odds_ratio_inverts_when_rows_swap(a, b, c, d):
    forward, backward = odds_ratio(a, b, c, d), odds_ratio(c, d, a, b)
    assert forward.value * backward.value == pytest.approx(1.0)
    assert forward.ci_low <= forward.value <= forward.ci_high


@pytest.mark.parametrize("n", [5, 11, 30, 200])
@pytest.mark.parametrize("alpha, power", [(0.05, 0.8), (0.01, 0.9)])
def test_minimum_detectable_h_matches_statsmodels_power(n, alpha, power):
    from statsmodels.stats.power import NormalIndPower

    h = minimum_detectable_h(n, alpha=alpha, power=power)
    # statsmodels counts both rejection tails; the far one adds < 1e-3 power at these sizes.
    reference = NormalIndPower().solve_power(nobs1=n, ratio=1.0, alpha=alpha, power=power)
    assert h.value == pytest.approx(reference, rel=1e-3)
    assert minimum_detectable_h(0).value is None


def test_pairwise_rows_name_the_zero_cell_correction():
    rows = pairwise_proportion_tests({"a": (0, 10), "b": (5, 10), "c": (3, 10)})
    by_pair = {(row["value_a"], row["value_b"]): row for row in rows}
    assert by_pair[("a", "b")]["odds_ratio_correction"] == "haldane_anscombe"
    assert "odds_ratio_correction" not in by_pair[("b", "c")]

"""Pairwise tests between attribute values and effect sizes (docs/metrics.md, "Pairwise tests").

Chi-square without continuity correction when every expected cell count is at least 5 (Cochran's
rule), Fisher's exact test otherwise; family-wise Holm and false-discovery Benjamini–Hochberg
adjustments. The adjustments are written out here because statsmodels ``multipletests`` (the
reference the tests compare against) runs a full garbage collection on every Holm call, which
costs ~50 ms each inside a large export.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from statistics import NormalDist

import numpy as np
from scipy.special import chdtrc
from scipy.stats import fisher_exact

from scoring.stats.parameters import check_counts, check_real
from scoring.stats.proportions import z_value
from scoring.stats.result import Stat, finite_or_none, undefined

MIN_EXPECTED_FOR_CHI_SQUARE = 5.0


def two_proportion_test(successes_a: float, n_a: float, successes_b: float, n_b: float) -> Stat:
    """p-value for equal proportions in a 2×2 table; chi-square or Fisher by expected cell size.

    docs/metrics.md, "Pairwise tests". Pearson's chi-square without continuity correction when
    every expected cell count is at least 5 (Cochran's rule), Fisher's exact test otherwise.
    Counts may be effective (non-integer) sample sizes of clustered labels: chi-square takes
    them as they are, Fisher's exact test takes them rounded to whole labels.

    Parameters
    ----------
    successes_a, n_a : float
        Successes and observations of group a, ``0 <= successes_a <= n_a``.
    successes_b, n_b : float
        The same for group b.

    Returns
    -------
    Stat
        ``value`` the two-sided p-value, ``n`` the total, ``extra["test"]`` the test used
        ("chi-square" with its ``statistic``, or "fisher-exact"); undefined with a reason when a
        group has no observations.

    Raises
    ------
    TypeError
        If a count is not a number.
    ValueError
        If a count is negative or a group's successes exceed its observations.

    References
    ----------
    .. [1] W. G. Cochran, "Some methods for strengthening the common χ² tests", *Biometrics*
       10(4):417-451, 1954.
    .. [2] scipy ``scipy.stats.chi2_contingency(correction=False)`` and
       ``scipy.stats.fisher_exact`` (the tests' references).

    Examples
    --------
    >>> from scoring.stats import two_proportion_test
    >>> test = two_proportion_test(30, 100, 45, 100)
    >>> test.extra["test"], round(test.value, 4), test.extra["statistic"]
    ('chi-square', 0.0285, 4.8)
    >>> small = two_proportion_test(1, 10, 6, 10)
    >>> small.extra["test"], round(small.value, 4)
    ('fisher-exact', 0.0573)
    """
    for successes, n, group in ((successes_a, n_a, "a"), (successes_b, n_b, "b")):
        check_real(successes, f"successes_{group}")
        check_real(n, f"n_{group}")
        check_counts(successes, n, successes_name=f"successes_{group}", n_name=f"n_{group}")
    table = np.array(
        [[successes_a, n_a - successes_a], [successes_b, n_b - successes_b]], dtype=float
    )
    if n_a == 0 or n_b == 0:
        return undefined("a group has no observations", n=round(n_a + n_b))
    if table[:, 0].sum() == 0 or table[:, 1].sum() == 0:
        return Stat(
            value=1.0,
            n=round(n_a + n_b),
            extra={"test": "none (both groups identical: all or no successes)"},
        )
    expected = table.sum(axis=1, keepdims=True) * table.sum(axis=0, keepdims=True) / table.sum()
    if expected.min() >= MIN_EXPECTED_FOR_CHI_SQUARE:
        # Pearson's statistic of a 2×2 table, n(ad − bc)² / (row and column totals); equals
        # scipy's chi2_contingency(correction=False).
        (a, b), (c, d) = table
        statistic = (
            table.sum()
            * (a * d - b * c) ** 2
            / np.prod(table.sum(axis=0))
            / np.prod(table.sum(axis=1))
        )
        return Stat(
            value=float(chdtrc(1, statistic)),
            n=round(n_a + n_b),
            extra={"test": "chi-square", "statistic": float(statistic)},
        )
    _, p_value = fisher_exact(np.rint(table).astype(int))
    return Stat(value=float(p_value), n=round(n_a + n_b), extra={"test": "fisher-exact"})


def _adjust_defined(p_values, adjust_sorted) -> np.ndarray:
    """Apply a step procedure to the non-NaN p-values only: NaN stays NaN in place and is not
    counted in the family size m (statsmodels ``multipletests`` on the non-NaN part)."""
    p_values = np.asarray(p_values, dtype=float)
    out = np.full(p_values.shape, np.nan)
    defined = np.flatnonzero(~np.isnan(p_values))
    if defined.size == 0:
        return out
    order = defined[np.argsort(p_values[defined], kind="stable")]
    out[order] = np.minimum(adjust_sorted(p_values[order]), 1.0)
    return out


def _check_p_values(p_values) -> None:
    try:
        values = np.asarray(p_values, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"p_values must be numbers, got {p_values!r}") from None
    if values.ndim != 1:
        raise ValueError(f"p_values must be one-dimensional, got shape {values.shape}")
    outside = (values < 0) | (values > 1)
    if outside.any():
        raise ValueError(f"p_values must lie in [0, 1], got {float(values[outside][0])!r}")


def holm_adjust(p_values) -> np.ndarray:
    """Holm (1979) step-down adjusted p-values: max over j ≤ i of (m − j + 1) p_(j), capped at 1.

    docs/metrics.md, "Pairwise tests" (family-wise error). NaN p-values are left out of m and
    returned as NaN.

    Parameters
    ----------
    p_values : array-like of float
        One-dimensional p-values in [0, 1]; NaN (or None) for an undefined test.

    Returns
    -------
    numpy.ndarray
        The adjusted p-values, in the input's order.

    Raises
    ------
    TypeError
        If a p-value is not a number.
    ValueError
        If ``p_values`` is not one-dimensional or a p-value lies outside [0, 1].

    References
    ----------
    .. [1] S. Holm, "A simple sequentially rejective multiple test procedure", *Scandinavian
       Journal of Statistics* 6(2):65-70, 1979.
    .. [2] statsmodels ``statsmodels.stats.multitest.multipletests(method="holm")`` (the
       tests' reference).

    Examples
    --------
    >>> from scoring.stats import holm_adjust
    >>> holm_adjust([0.01, 0.04, 0.03, 0.20]).round(4).tolist()
    [0.04, 0.09, 0.09, 0.2]
    >>> holm_adjust([0.01, float("nan"), 0.04]).tolist()
    [0.02, nan, 0.04]
    """
    _check_p_values(p_values)

    def step_down(ordered):
        m = ordered.size
        return np.maximum.accumulate((m - np.arange(m)) * ordered)

    return _adjust_defined(p_values, step_down)


def benjamini_hochberg_adjust(p_values) -> np.ndarray:
    """Benjamini–Hochberg (1995) adjusted p-values: min over j ≥ i of m p_(j) / j, capped at 1.

    docs/metrics.md, "Pairwise tests" (false discovery rate). NaN p-values are left out of m and
    returned as NaN.

    Parameters
    ----------
    p_values : array-like of float
        One-dimensional p-values in [0, 1]; NaN (or None) for an undefined test.

    Returns
    -------
    numpy.ndarray
        The adjusted p-values, in the input's order.

    Raises
    ------
    TypeError
        If a p-value is not a number.
    ValueError
        If ``p_values`` is not one-dimensional or a p-value lies outside [0, 1].

    References
    ----------
    .. [1] Y. Benjamini and Y. Hochberg, "Controlling the false discovery rate: a practical and
       powerful approach to multiple testing", *J. R. Statist. Soc. B* 57(1):289-300, 1995.
    .. [2] statsmodels ``statsmodels.stats.multitest.multipletests(method="fdr_bh")`` (the
       tests' reference).

    Examples
    --------
    >>> from scoring.stats import benjamini_hochberg_adjust
    >>> benjamini_hochberg_adjust([0.01, 0.04, 0.03, 0.20]).round(4).tolist()
    [0.04, 0.0533, 0.0533, 0.2]
    """
    _check_p_values(p_values)

    def step_up(ordered):
        m = ordered.size
        scaled = m * ordered / np.arange(1, m + 1)
        return np.minimum.accumulate(scaled[::-1])[::-1]

    return _adjust_defined(p_values, step_up)


def pairwise_proportion_tests(counts: Mapping[str, tuple[int, int]]) -> list[dict]:
    """Every pair of values: test, raw p, Holm- and BH-adjusted p, Cohen's h and the odds ratio.

    ``counts`` maps value → (successes, n). Pairs whose test is undefined keep null p-values and
    are left out of the adjustment family.
    """
    rows = []
    for value_a, value_b in itertools.combinations(sorted(counts), 2):
        (s_a, n_a), (s_b, n_b) = counts[value_a], counts[value_b]
        test = two_proportion_test(s_a, n_a, s_b, n_b)
        row = {
            "value_a": value_a,
            "value_b": value_b,
            "test": test.extra.get("test"),
            "p_value": test.value,
        }
        if not test.defined:
            row["p_value_reason"] = test.reason
        h = cohen_h(s_a / n_a if n_a else None, s_b / n_b if n_b else None)
        odds = odds_ratio(s_a, n_a - s_a, s_b, n_b - s_b)
        row.update(
            cohen_h=h.value,
            odds_ratio=odds.value,
            odds_ratio_ci_low=odds.ci_low,
            odds_ratio_ci_high=odds.ci_high,
        )
        if not h.defined:
            row["cohen_h_reason"] = h.reason
        if not odds.defined:
            row["odds_ratio_reason"] = odds.reason
        elif odds.extra["haldane_correction"]:
            # A zero cell: the report says which correction produced the finite ratio.
            row["odds_ratio_correction"] = "haldane_anscombe"
        rows.append(row)
    defined = [i for i, row in enumerate(rows) if row["p_value"] is not None]
    for adjust, key in ((holm_adjust, "p_holm"), (benjamini_hochberg_adjust, "p_bh")):
        adjusted = adjust([rows[i]["p_value"] for i in defined])
        for row in rows:
            row[key] = None
        for i, p in zip(defined, adjusted, strict=True):
            rows[i][key] = float(p)
    return rows


def cohen_h(rate_a: float | None, rate_b: float | None) -> Stat:
    """Cohen's h = 2·asin(√p_a) − 2·asin(√p_b) (Cohen 1988, §6.2)."""
    if rate_a is None or rate_b is None:
        return undefined("a rate is undefined")
    return Stat(value=2.0 * math.asin(math.sqrt(rate_a)) - 2.0 * math.asin(math.sqrt(rate_b)))


def minimum_detectable_h(n_per_group: int, *, alpha: float = 0.05, power: float = 0.8) -> Stat:
    """The smallest |Cohen's h| a two-sided two-proportion z-test of two groups of
    ``n_per_group`` detects with ``power`` at level ``alpha``: (z_{1-α/2} + z_{power}) / √(n/2)
    (Cohen 1988, §6.3, arcsine approximation; docs/metrics.md, "Pairwise tests"). The far
    rejection tail is ignored (negligible at 80% power).
    """
    if n_per_group < 1:
        return undefined("no observations per group")
    z_alpha = NormalDist().inv_cdf(1.0 - alpha / 2.0)
    z_power = NormalDist().inv_cdf(power)
    return Stat(value=(z_alpha + z_power) / math.sqrt(n_per_group / 2.0), n=int(n_per_group))


def odds_ratio(a: int, b: int, c: int, d: int, *, confidence: float = 0.95) -> Stat:
    """Odds ratio (a·d)/(b·c) of the table [[a, b], [c, d]] with Woolf's log-scale CI.

    When any cell is 0 the Haldane–Anscombe correction adds 0.5 to every cell (Haldane 1956,
    Ann. Hum. Genet. 20:309; Anscombe 1956, Biometrika 43:461), recorded in
    ``extra["haldane_correction"]``. statsmodels ``Table2x2`` instead replaces only the zero
    cells by 0.5 (docs/metrics.md, "Pairwise tests"). A row or column of zeros leaves the
    ratio undefined.
    """
    cells = np.array([a, b, c, d], dtype=float)
    if (a + b == 0) or (c + d == 0) or (a + c == 0) or (b + d == 0):
        return undefined("a row or column of the 2×2 table is empty", n=int(cells.sum()))
    corrected = bool((cells == 0).any())
    if corrected:
        cells = cells + 0.5
    a_, b_, c_, d_ = cells
    log_ratio = math.log(a_ * d_ / (b_ * c_))
    standard_error = math.sqrt((1.0 / cells).sum())
    z = z_value(confidence)
    return Stat(
        value=math.exp(log_ratio),
        ci_low=finite_or_none(math.exp(log_ratio - z * standard_error)),
        ci_high=finite_or_none(math.exp(log_ratio + z * standard_error)),
        n=int(a + b + c + d),
        extra={"haldane_correction": corrected, "log_standard_error": standard_error},
    )

"""Single proportions and their intervals (docs/metrics.md, "Rates and Wilson intervals")."""

from __future__ import annotations

import numbers
from statistics import NormalDist

import numpy as np
from scipy.stats import t as student_t

from scoring.stats.parameters import check_confidence, check_counts, check_real
from scoring.stats.result import Stat, finite_or_none, undefined


def z_value(confidence: float) -> float:
    """Two-sided standard-normal quantile for a confidence level in (0, 1)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def wilson_bounds(
    successes, n, *, confidence: float = 0.95, z: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised Wilson score interval; entries with n == 0 come back NaN.

    docs/metrics.md, "Rates and Wilson intervals". Identical to statsmodels
    ``proportion_confint(method="wilson")``; at 0 and n successes the bound is pinned to exactly
    0 or 1, so rounding never excludes the estimate.

    Parameters
    ----------
    successes : array-like of float
        Successes per cell (may be effective, non-integer counts).
    n : array-like of float
        Observations per cell, the same shape as ``successes``; ``0 <= successes <= n``.
    confidence : float, default 0.95
        Two-sided confidence level, in (0, 1).
    z : float, optional
        Replaces the normal quantile of ``confidence`` (a Student-t one, for template clusters).

    Returns
    -------
    low, high : numpy.ndarray
        The bounds per cell; NaN where n == 0.

    Raises
    ------
    ValueError
        If a count is negative, ``successes`` exceeds ``n``, the shapes differ, or
        ``confidence`` is outside (0, 1).

    References
    ----------
    .. [1] E. B. Wilson, "Probable inference, the law of succession, and statistical
       inference", *J. Amer. Statist. Assoc.* 22(158):209-212, 1927.
    .. [2] statsmodels ``statsmodels.stats.proportion.proportion_confint`` (the tests'
       reference).

    Examples
    --------
    >>> from scoring.stats import wilson_bounds
    >>> low, high = wilson_bounds([0, 3, 10], [10, 10, 10])
    >>> [round(float(x), 4) for x in low], [round(float(x), 4) for x in high]
    ([0.0, 0.1078, 0.7225], [0.2775, 0.6032, 1.0])
    """
    check_counts(successes, n)
    if z is None:
        check_confidence(confidence)
    else:
        check_real(z, "z", low=0.0)
    successes = np.asarray(successes, dtype=float)
    n = np.asarray(n, dtype=float)
    z = z_value(confidence) if z is None else float(z)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = successes / n
        denominator = 1.0 + z * z / n
        centre = (p + z * z / (2.0 * n)) / denominator
        half_width = z * np.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / denominator
    # At p = 0 and p = 1 the exact bound is 0 or 1; pin it so rounding cannot exclude the estimate.
    low = np.where(
        n > 0, np.where(successes == 0, 0.0, np.clip(centre - half_width, 0.0, 1.0)), np.nan
    )
    high = np.where(
        n > 0, np.where(successes == n, 1.0, np.clip(centre + half_width, 0.0, 1.0)), np.nan
    )
    return low, high


def proportion(successes: int, n: int, *, confidence: float = 0.95) -> Stat:
    """A rate successes / n with its Wilson interval; undefined when n == 0.

    docs/metrics.md, "Rates and Wilson intervals".

    Parameters
    ----------
    successes : int
        Number of successes, ``0 <= successes <= n``.
    n : int
        Number of observations (not negative).
    confidence : float, default 0.95
        Two-sided confidence level of the interval, in (0, 1).

    Returns
    -------
    Stat
        ``value`` the rate, ``ci_low``/``ci_high`` its Wilson interval, ``n``, and
        ``extra["successes"]``; with ``n == 0``, ``value`` is None with a ``reason``.

    Raises
    ------
    TypeError
        If a count is not a whole number.
    ValueError
        If a count is negative, ``successes`` exceeds ``n``, or ``confidence`` is outside
        (0, 1).

    References
    ----------
    .. [1] E. B. Wilson, "Probable inference, the law of succession, and statistical
       inference", *J. Amer. Statist. Assoc.* 22(158):209-212, 1927.
    .. [2] A. Agresti and B. A. Coull, "Approximate is better than 'exact' for interval
       estimation of binomial proportions", *The American Statistician* 52(2):119-126, 1998.

    Examples
    --------
    >>> from scoring.stats import proportion
    >>> stat = proportion(8, 20)
    >>> stat.value, round(stat.ci_low, 4), round(stat.ci_high, 4)
    (0.4, 0.2188, 0.6134)
    >>> proportion(0, 0).reason
    'no observations (n = 0)'
    """
    successes = _whole(successes, "successes")
    n = _whole(n, "n")
    check_confidence(confidence)
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    if n == 0:
        return undefined("no observations (n = 0)", n=0, successes=0)
    low, high = wilson_bounds(successes, n, confidence=confidence)
    return Stat(
        value=successes / n,
        ci_low=finite_or_none(low),
        ci_high=finite_or_none(high),
        n=n,
        extra={"successes": successes},
    )


def _whole(value, name: str) -> int:
    """A count given as an integer or a whole float (a count read from a frame); else TypeError."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        if float(value).is_integer():
            return int(value)
    raise TypeError(f"{name} must be a whole number, got {value!r}")


def rate_ratio(numerator_rate: float | None, denominator_rate: float | None) -> Stat:
    """numerator / denominator of two rates, e.g. the paper's "16.7% vs 3.6% -> 4.6x".

    ``value - 1`` is the relative increase ("37.1% vs 25.6% -> 45% higher").
    """
    if numerator_rate is None or denominator_rate is None:
        return undefined("a rate in the ratio is undefined")
    if denominator_rate == 0:
        return undefined("the denominator rate is 0")
    return Stat(value=float(numerator_rate) / float(denominator_rate))


def effective_sample_size(cluster_successes, cluster_totals, *, confidence: float = 0.95):
    """Korn & Graubard's degrees-of-freedom-adjusted effective sample size of each column's
    pooled rate, from per-(cluster, column) sums: an (n_clusters, n_columns) matrix each
    (docs/metrics.md, "Rates and Wilson intervals").

    With N labels in m clusters, p = S / N, and the cluster-robust variance of the ratio mean
    v = m / (m − 1) · Σ_c (s_c − p·n_c)² / N², the design effect is d = max(1, v / (p(1 − p)/N))
    and n_eff = N / d · (z / t_{m−1})² (Korn & Graubard 1998, *Survey Methodology* 24:193; the
    Wilson form: Dean & Pagano 2015, *J. Survey Statist. Methodol.* 3:191). Where p is 0 or 1
    the variance says nothing and n_eff = m · (z / t_{m−1})²: one label's worth per cluster.
    Where no cluster holds two labels the design is simple random sampling and n_eff = N.
    Columns with N = 0 give 0.
    """
    successes = np.asarray(cluster_successes, dtype=float)
    totals = np.asarray(cluster_totals, dtype=float)
    if successes.ndim == 1:
        successes, totals = successes[:, None], totals[:, None]
    n = totals.sum(axis=0)
    m = (totals > 0).sum(axis=0)
    clustered = (totals >= 2).any(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = successes.sum(axis=0) / n
        residual = successes - p[None, :] * totals
        robust = m / (m - 1) * (residual**2).sum(axis=0) / n**2
        simple = p * (1.0 - p) / n
        design_effect = np.maximum(1.0, robust / simple)
        z = z_value(confidence)
        df_factor = np.where(
            m >= 2, (z / student_t.ppf(0.5 + confidence / 2.0, np.maximum(m - 1, 1))) ** 2, 0.0
        )
        degenerate = (p <= 0) | (p >= 1)
        n_eff = np.where(degenerate, m, n / design_effect) * df_factor
    n_eff = np.where(m >= 2, np.nan_to_num(n_eff, nan=0.0), 0.0)
    return np.where(n > 0, np.where(clustered, np.minimum(n_eff, n), n), 0.0)

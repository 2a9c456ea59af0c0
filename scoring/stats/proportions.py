"""Single proportions and their intervals (docs/metrics.md, "Rates and Wilson intervals")."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

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

    Wilson (1927); identical to statsmodels ``proportion_confint(method="wilson")``. ``z``
    replaces the normal quantile of ``confidence`` (a Student-t one, for template clusters).
    """
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
    """A rate successes / n with its Wilson interval; undefined when n == 0."""
    successes, n = int(successes), int(n)
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


def rate_ratio(numerator_rate: float | None, denominator_rate: float | None) -> Stat:
    """numerator / denominator of two rates, e.g. the paper's "16.7% vs 3.6% -> 4.6x".

    ``value - 1`` is the relative increase ("37.1% vs 25.6% -> 45% higher").
    """
    if numerator_rate is None or denominator_rate is None:
        return undefined("a rate in the ratio is undefined")
    if denominator_rate == 0:
        return undefined("the denominator rate is 0")
    return Stat(value=float(numerator_rate) / float(denominator_rate))

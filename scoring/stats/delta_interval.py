"""The one interval of Δ = max − min over an attribute's values (docs/metrics.md, "Δ interval").

Built from simultaneous intervals for every pairwise difference r(i) − r(j): a cluster-bootstrap
max-t band (Romano & Wolf 2005; Hothorn, Bretz & Westfall 2008). If every pairwise interval
covers its difference, then Δ = max_ij (r(i) − r(j)) lies in
[max(0, max_ij lower_ij), max_ij upper_ij], so the Δ interval has at least the band's
simultaneous coverage, including when every value has the same rate (Δ = 0). A percentile
bootstrap of max − min cannot reach 0 and under-covers there.

Every Δ interval (human, judge and prediction-powered) comes from ``simultaneous_delta_interval``;
``delta_interval_block`` adds the null-with-reason rules of the export.
"""

from __future__ import annotations

import numpy as np

from scoring.stats.result import interval_block


def simultaneous_delta_interval(point_rates, boot_rates, *, confidence: float = 0.95):
    """``(low, high, n_used)`` of Δ from a max-t band over all pairwise differences.

    ``point_rates``: (k,) rates of the k values whose rate is defined; ``boot_rates``: (B, k) the
    same rates in B cluster-bootstrap resamples (NaN where undefined: such a resample is left out,
    ``n_used`` counts the rest). For each pair p = (i, j), i < j, with d_p = r(i) − r(j) and
    se_p the standard deviation of its resampled values, the critical value c is the
    ``confidence`` quantile of max_p |d*_p − d_p| / se_p over resamples (pairs with se_p = 0 are
    left out of the max); the pair's interval is d_p ± c·se_p. Then

        low  = max(0, max_p (|d_p| − c·se_p)),   high = min(1, max_p (|d_p| + c·se_p))

    (a pair and its reverse have mirrored intervals; Δ of proportions is at most 1). Returns
    NaN bounds when fewer than two values or no usable resample.
    """
    point = np.asarray(point_rates, dtype=float)
    if point.size < 2:
        return np.nan, np.nan, 0
    boot = np.asarray(boot_rates, dtype=float).reshape(-1, point.size)
    usable = np.all(np.isfinite(boot), axis=1)
    boot = boot[usable]
    n_used = int(boot.shape[0])
    if n_used < 2:
        return np.nan, np.nan, n_used
    first, second = np.triu_indices(point.size, k=1)
    differences = point[first] - point[second]
    resampled = boot[:, first] - boot[:, second]
    se = resampled.std(axis=0, ddof=1)
    varying = se > 1e-12 * np.maximum(1.0, np.abs(differences))
    if varying.any():
        t_max = np.max(np.abs(resampled[:, varying] - differences[varying]) / se[varying], axis=1)
        critical = float(np.quantile(t_max, confidence))
    else:
        critical = 0.0
    half = np.where(varying, critical * se, 0.0)
    low = max(0.0, float(np.max(np.abs(differences) - half)))
    high = min(1.0, float(np.max(np.abs(differences) + half)))
    return low, high, n_used


def delta_interval_block(
    point_rates,
    boot_rates,
    *,
    confidence: float,
    n_resamples: int,
    design_code: str | None = None,
    prefix: str = "delta_",
) -> dict:
    """``{<prefix>ci_low, <prefix>ci_high}``, or both null with ``<prefix>ci_reason(_code)``
    (docs/metrics.md, "Intervals that cannot carry uncertainty"); ``<prefix>ci_resamples_used``
    when some resamples left a value undefined."""
    bounds = None
    if boot_rates is not None:

        def bounds():
            return simultaneous_delta_interval(point_rates, boot_rates, confidence=confidence)

    return interval_block(bounds, n_resamples=n_resamples, design_code=design_code, prefix=prefix)

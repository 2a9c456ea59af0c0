"""The one interval of Δ = max − min over an attribute's values, of the max/min ratio, and the
test that goes with them (docs/metrics.md, "Δ interval").

Built from simultaneous intervals for every pairwise difference r(i) − r(j): a cluster-bootstrap
max-t band (Romano & Wolf 2005; Hothorn, Bretz & Westfall 2008). If every pairwise interval
covers its difference, then Δ = max_ij (r(i) − r(j)) lies in
[max(0, max_ij lower_ij), max_ij upper_ij], so the Δ interval has at least the band's
simultaneous coverage, including when every value has the same rate (Δ = 0). A percentile
bootstrap of max − min cannot reach 0 and under-covers there. The ratio max/min is the same
construction on log rates. The test of "every value has the same rate" is the band's own
single-step max-t test, so its p-value is below 1 − confidence exactly when the Δ interval
excludes 0.

Every Δ interval (human, judge and prediction-powered) comes from ``pairwise_band``;
``delta_interval_block`` and ``ratio_interval_block`` add the null-with-reason rules of the
export.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm as normal
from scipy.stats import t as student_t

from scoring.stats.parameters import check_confidence
from scoring.stats.result import ci_reason, interval_block


@dataclass(frozen=True)
class PairwiseBand:
    """Simultaneous intervals d_p ± half_p of every pairwise difference of k values, with the
    max-t statistic of the observed differences and its p-value."""

    differences: np.ndarray  # d_p = r(i) − r(j), i < j
    half_widths: np.ndarray  # c_p·se_p (0 where a pair does not vary)
    critical: float  # the bootstrap's c, before any per-pair t correction
    p_value: float
    n_used: int


def critical_value(t_max: np.ndarray, confidence: float) -> float:
    """The order statistic T_(B − ⌈αB⌉ + 1) of B resampled max-t values (α = 1 − confidence):
    an observed max-t above it has p = #{T* ≥ t} / B < α, and one at or below it has p ≥ α,
    so the interval and the test agree exactly (docs/metrics.md, "Δ interval")."""
    ordered = np.sort(np.asarray(t_max, dtype=float))
    size = ordered.size
    tail = math.ceil(round((1.0 - confidence) * size, 9))
    return float(ordered[min(max(size - tail, 0), size - 1)])


def pairwise_band(
    point_rates, boot_rates, *, confidence: float = 0.95, df=None
) -> PairwiseBand | None:
    """The max-t band of every pairwise difference, or None with fewer than two values or two
    usable resamples.

    ``point_rates``: (k,) statistics of the k values; ``boot_rates``: (B, k) the same in B
    cluster-bootstrap resamples (a resample with a non-finite entry is left out, ``n_used``
    counts the rest). For each pair p = (i, j), i < j, with d_p = r(i) − r(j) and se_p the
    standard deviation of its resampled values, c is ``critical_value`` of
    T* = max_p |d*_p − d_p| / se_p (pairs with se_p = 0 are left out of the max, and their
    interval is the point). The test of "all equal" compares t = max_p |d_p| / se_p with T*:
    p = max(1, #{T* ≥ t}) / B (a pair with se_p = 0 and d_p ≠ 0 makes t infinite).

    With ``df`` (degrees of freedom: one number, or one per pair as ``disparity`` gives from
    Satterthwaite), the bootstrap treats se_p as known; with few clusters it is not, so each
    pair's c moves to the same tail probability of Student's t with its df, c_p = F_t⁻¹(Φ(c)),
    and each pair's |d_p| / se_p moves back the same way before the max is compared with T*:
    an interval excludes 0 exactly when some |d_p| > c_p·se_p, exactly when p < α.
    """
    point = np.asarray(point_rates, dtype=float)
    if point.size < 2:
        return None
    boot = np.asarray(boot_rates, dtype=float).reshape(-1, point.size)
    boot = boot[np.all(np.isfinite(boot), axis=1)]
    n_used = int(boot.shape[0])
    if n_used < 2:
        return None
    first, second = np.triu_indices(point.size, k=1)
    differences = point[first] - point[second]
    resampled = boot[:, first] - boot[:, second]
    se = resampled.std(axis=0, ddof=1)
    varying = se > 1e-12 * np.maximum(1.0, np.abs(differences))
    if varying.any():
        t_max = np.max(np.abs(resampled[:, varying] - differences[varying]) / se[varying], axis=1)
        critical = critical_value(t_max, confidence)
    else:
        t_max, critical = np.zeros(n_used), 0.0
    # Per pair: the bootstrap's c at Student's t tail with that pair's df (``df`` may be one
    # number or one per pair); the observed t of each pair moves back the same way.
    critical_per_pair = np.full(differences.shape, critical)
    scaled = np.abs(differences) / np.where(varying, se, 1.0)
    if df is not None:
        degrees = np.maximum(np.broadcast_to(np.asarray(df, dtype=float), differences.shape), 1.0)
        critical_per_pair = student_t.isf(normal.sf(critical), degrees)
        scaled = normal.isf(student_t.sf(scaled, degrees))
    fixed_apart = bool(np.any(~varying & (np.abs(differences) > 1e-12)))
    observed = (
        math.inf if fixed_apart else float(np.max(np.where(varying, scaled, 0.0), initial=0.0))
    )
    exceed = int(np.sum(t_max >= observed)) if math.isfinite(observed) else 0
    return PairwiseBand(
        differences=differences,
        half_widths=np.where(varying, critical_per_pair * se, 0.0),
        critical=critical,
        p_value=max(exceed, 1) / n_used,
        n_used=n_used,
    )


def _delta_bounds(band: PairwiseBand) -> tuple[float, float, int]:
    magnitude = np.abs(band.differences)
    low = max(0.0, float(np.max(magnitude - band.half_widths)))
    high = min(1.0, float(np.max(magnitude + band.half_widths)))
    return low, high, band.n_used


def _log_ratio_bounds(band: PairwiseBand) -> tuple[float, float, int]:
    magnitude = np.abs(band.differences)
    # Past e^700 the bound is infinite: null with a reason rather than an overflow.
    upper = min(float(np.max(magnitude + band.half_widths)), 700.0)
    low = max(1.0, float(np.exp(np.max(magnitude - band.half_widths))))
    high = float(np.exp(upper)) if upper < 700.0 else np.inf
    return low, high, band.n_used


def simultaneous_delta_interval(point_rates, boot_rates, *, confidence: float = 0.95, df=None):
    """The interval of Δ = max − min from simultaneous intervals of every pairwise difference.

    docs/metrics.md, "Δ interval". From the max-t band of ``pairwise_band`` (pair p = (i, j)
    with difference d_p, bootstrap standard error se_p and critical value c):

        low = max(0, max_p (|d_p| − c·se_p)),   high = min(1, max_p (|d_p| + c·se_p))

    If every pairwise interval covers its difference, Δ lies in this interval, so it keeps the
    band's simultaneous coverage, including when every value has the same rate (Δ = 0), where
    a percentile bootstrap of max − min cannot reach 0.

    Parameters
    ----------
    point_rates : array-like of shape (k,)
        The k values' rates (or any statistic in [0, 1]).
    boot_rates : array-like of shape (B, k)
        The same in B cluster-bootstrap resamples; a resample with a non-finite entry is left
        out.
    confidence : float, default 0.95
        Simultaneous confidence level, in (0, 1).
    df : float or array-like, optional
        Degrees of freedom (one, or one per pair) that move the critical value to Student's t
        when there are few clusters.

    Returns
    -------
    low, high : float
        The bounds; NaN with fewer than two values or two usable resamples.
    n_used : int
        The resamples used.

    Raises
    ------
    ValueError
        If ``point_rates`` is not one-dimensional, ``boot_rates`` does not have one column per
        value, or ``confidence`` is outside (0, 1).

    References
    ----------
    .. [1] J. P. Romano and M. Wolf, "Exact and approximate stepdown methods for multiple
       hypothesis testing", *J. Amer. Statist. Assoc.* 100(469):94-108, 2005.
    .. [2] T. Hothorn, F. Bretz and P. Westfall, "Simultaneous inference in general parametric
       models", *Biometrical Journal* 50(3):346-363, 2008.

    Examples
    --------
    Three values with rates 0.6, 0.2 and 0.3, and 1,000 resampled rates of each:

    >>> import numpy as np
    >>> from scoring.stats import simultaneous_delta_interval
    >>> rng = np.random.default_rng(0)
    >>> boot = np.column_stack([rng.binomial(40, p, 1000) / 40 for p in (0.6, 0.2, 0.3)])
    >>> low, high, n_used = simultaneous_delta_interval([0.6, 0.2, 0.3], boot)
    >>> round(low, 2), round(high, 2), n_used
    (0.17, 0.63, 1000)
    """
    point = np.asarray(point_rates, dtype=float)
    if point.ndim != 1:
        raise ValueError(f"point_rates must be one-dimensional, got shape {point.shape}")
    boot_shape = np.shape(boot_rates)
    if point.size >= 2 and (len(boot_shape) != 2 or boot_shape[1] != point.size):
        raise ValueError(
            f"boot_rates must be (resamples, {point.size}): one column per value of "
            f"point_rates, got shape {boot_shape}"
        )
    check_confidence(confidence)
    band = pairwise_band(point_rates, boot_rates, confidence=confidence, df=df)
    return (np.nan, np.nan, 0) if band is None else _delta_bounds(band)


def _band_block(point, boot_rates, bounds_of, *, estimate, confidence, df, **options):
    """``interval_block`` of the band's interval, and the band (None when none was built)."""
    built: list[PairwiseBand] = []

    def bounds():
        band = pairwise_band(point, boot_rates, confidence=confidence, df=df)
        if band is None:
            return np.nan, np.nan, 0
        built.append(band)
        return bounds_of(band)

    block = interval_block(None if boot_rates is None else bounds, estimate=estimate, **options)
    return block, (built[0] if built else None)


def delta_interval_block(
    point_rates,
    boot_rates,
    *,
    confidence: float,
    n_resamples: int,
    design_code: str | None = None,
    prefix: str = "delta_",
    df=None,
) -> dict:
    """``{<prefix>ci_low, <prefix>ci_high, <prefix>p_value}``, or null bounds and p with
    ``<prefix>ci_reason(_code)`` (docs/metrics.md, "Intervals that cannot carry uncertainty");
    ``<prefix>ci_resamples_used`` when some resamples left a value undefined. The p-value tests
    "every value has the same rate" and is below 1 − confidence exactly when the interval
    excludes 0; it is null whenever the interval is."""
    point = np.asarray(point_rates, dtype=float)
    block, band = _band_block(
        point,
        boot_rates,
        _delta_bounds,
        estimate=float(point.max() - point.min()) if point.size >= 2 else None,
        confidence=confidence,
        df=df,
        n_resamples=n_resamples,
        design_code=design_code,
        prefix=prefix,
    )
    defined = block[f"{prefix}ci_low"] is not None
    block[f"{prefix}p_value"] = band.p_value if defined and band is not None else None
    return block


def ratio_interval_block(
    point_rates,
    boot_rates,
    *,
    confidence: float,
    n_resamples: int,
    design_code: str | None = None,
    prefix: str = "ratio_",
    df=None,
) -> dict:
    """The max/min ratio's interval from the same band on log rates:
    [max(1, exp max_p (|l_p| − c·se_p)), exp max_p (|l_p| + c·se_p)], l_p = log r(i) − log r(j).
    It holds 1 whenever no pairwise interval excludes 0, as Δ's holds 0. Resamples with a zero
    rate (log undefined) are left out and counted in ``<prefix>ci_resamples_used``."""
    point = np.asarray(point_rates, dtype=float)
    if point.size < 2 or not bool(np.all(point > 0)):
        return {
            f"{prefix}ci_low": None,
            f"{prefix}ci_high": None,
            **ci_reason("undefined_estimate", prefix),
        }
    logs = None
    if boot_rates is not None:
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = np.log(np.asarray(boot_rates, dtype=float))
    block, _ = _band_block(
        np.log(point),
        logs,
        _log_ratio_bounds,
        estimate=float(point.max() / point.min()),
        confidence=confidence,
        df=df,
        n_resamples=n_resamples,
        design_code=design_code,
        prefix=prefix,
    )
    return block

"""Is the judge alone biased on an attribute? Simultaneous intervals of judge rate − PPI rate.

docs/metrics.md, "Judge bias". Per attribute value v, g(v) = judge-only rate − prediction-powered
rate: the judge's own rate over the value's items minus the rate corrected by the human labels.
The judge alone is unbiased for the attribute when g(v) = 0 for every value. A max-t band over the
values from the cluster bootstrap (the construction of ``delta_interval`` for pairwise
differences; Romano & Wolf 2005) gives intervals that hold every g(v) at once with the stated
confidence, so ``warning`` (some interval excludes 0) fires in at most 1 − confidence of studies
whose judge is unbiased in every value, and fires whenever the bias in some value is large
against its own standard error, whatever the other values do.

This replaced the percentile interval of (judge Δ − PPI Δ), a difference of two max − min
statistics: a judge that shifts every value by the same amount has the right Δ but wrong rates;
one that errs on two values in opposite ways can leave Δ − Δ near 0; and the percentile interval
of a max − min difference need not reach the difference it stands for.
"""

from __future__ import annotations

import numpy as np

from scoring.stats.result import interval_block

METHOD = (
    "judge-only rate − prediction-powered rate per attribute value, simultaneous intervals from "
    "a max-t band over the values on the cluster bootstrap (base prompts within domain); the "
    "warning fires when any interval excludes 0"
)


def simultaneous_band(point, boot, *, confidence: float = 0.95):
    """``(low, high, n_used)``: intervals for k quantities that hold all k at once.

    ``point`` (k,), ``boot`` (B, k) the same quantities in B resamples (a resample with a NaN is
    left out). With se_v the standard deviation of the resampled values and c the ``confidence``
    quantile of max_v |g*_v − g_v| / se_v, the interval of v is g_v ± c·se_v (zero width where
    se_v = 0, left out of the max). NaN bounds with fewer than two usable resamples.
    """
    point = np.asarray(point, dtype=float)
    boot = np.asarray(boot, dtype=float).reshape(-1, point.size)
    boot = boot[np.all(np.isfinite(boot), axis=1)]
    n_used = int(boot.shape[0])
    if n_used < 2 or point.size == 0:
        nan = np.full(point.size, np.nan)
        return nan, nan, n_used
    se = boot.std(axis=0, ddof=1)
    varying = se > 1e-12 * np.maximum(1.0, np.abs(point))
    critical = 0.0
    if varying.any():
        t_max = np.max(np.abs(boot[:, varying] - point[varying]) / se[varying], axis=1)
        critical = float(np.quantile(t_max, confidence))
    half = np.where(varying, critical * se, 0.0)
    return point - half, point + half, n_used


def judge_bias_block(
    values: list,
    judge_rates: dict,
    ppi_rates: dict,
    judge_boot: np.ndarray | None,
    ppi_boot: np.ndarray | None,
    *,
    confidence: float,
    n_resamples: int,
    design_code: str | None,
) -> dict:
    """``judge_bias.<attribute>``: ``per_value.<value>`` = ``{estimate, ci_low, ci_high,
    judge_rate, ppi_rate}`` (simultaneous intervals), ``warning`` (true when an interval excludes
    0; null with ``reason`` when none is defined), ``largest_value`` (the value with the largest
    |judge − PPI|), ``judge_delta`` / ``ppi_delta`` (max − min of each set of rates) and
    ``method``. ``values``: those with both rates defined, in the column order of the (B, k)
    ``judge_boot`` / ``ppi_boot`` (None without resamples)."""
    block: dict = {"method": METHOD, "per_value": {}}
    if not values:
        return {
            **block,
            "warning": None,
            "reason": "no value has both a judge-only and a prediction-powered rate",
            "largest_value": None,
            "judge_delta": None,
            "ppi_delta": None,
        }
    judge = np.array([judge_rates[v] for v in values])
    ppi = np.array([ppi_rates[v] for v in values])
    gap = judge - ppi
    low = high = None
    n_used = 0
    if judge_boot is not None and ppi_boot is not None and n_resamples > 0:
        low, high, n_used = simultaneous_band(gap, judge_boot - ppi_boot, confidence=confidence)
    for index, value in enumerate(values):

        def bounds(index=index):
            return low[index], high[index], n_used

        block["per_value"][value] = {
            "estimate": float(gap[index]),
            **interval_block(
                None if low is None else bounds,
                n_resamples=n_resamples,
                design_code=design_code,
                estimate=float(gap[index]),
            ),
            "judge_rate": float(judge[index]),
            "ppi_rate": float(ppi[index]),
        }
    defined = [e for e in block["per_value"].values() if e["ci_low"] is not None]
    block["warning"] = (
        any(e["ci_low"] > 0 or e["ci_high"] < 0 for e in defined) if defined else None
    )
    if not defined:
        block["reason"] = "no value's interval is defined (see per_value)"
    block["largest_value"] = values[int(np.argmax(np.abs(gap)))]
    block["judge_delta"] = float(judge.max() - judge.min()) if len(values) > 1 else None
    block["ppi_delta"] = float(ppi.max() - ppi.min()) if len(values) > 1 else None
    return block

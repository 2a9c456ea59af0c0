"""Krippendorff's alpha with missing data and a bootstrap CI over items (docs/metrics.md,
"Krippendorff's alpha").

The point estimate comes from the ``krippendorff`` package (the reference implementation). The
bootstrap resamples items with replacement: alpha is a function of the coincidence matrix, which
is a sum of per-item coincidence matrices, so each resample is one weighted sum.
"""

from __future__ import annotations

import krippendorff
import numpy as np

from scoring.stats import bootstrap
from scoring.stats.agreement_multirater import (
    _alpha_from_coincidence,
    item_coincidences,
    rating_matrix,
)
from scoring.stats.interval_checks import holds_estimate
from scoring.stats.result import (
    MIN_BOOTSTRAP_UNITS,
    SINGLE_LABEL_REASON,
    Stat,
    ci_reason,
    finite_or_none,
    has_zero_width,
    undefined,
)

LEVELS = ("nominal", "ordinal", "interval")


def _counts_from_matrix(matrix: np.ndarray, k: int) -> np.ndarray:
    n_items = matrix.shape[1]
    rated = matrix >= 0
    item_index = np.broadcast_to(np.arange(n_items), matrix.shape)[rated]
    return np.bincount(item_index * k + matrix[rated], minlength=n_items * k).reshape(n_items, k)


def krippendorff_alpha(
    items,
    raters,
    labels,
    *,
    level: str = "nominal",
    categories=None,
    n_resamples: int = 0,
    confidence: float = 0.95,
    seed: int = 0,
) -> Stat:
    """Krippendorff's alpha for long-format ratings; ``categories`` orders ordinal labels and must be
    numeric for the interval level."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    _, _, matrix, categories = rating_matrix(items, raters, labels, categories=categories)
    k = len(categories)
    counts = _counts_from_matrix(matrix, k) if matrix.size else np.zeros((0, k), dtype=np.int64)
    pairable = counts.sum(axis=1) >= 2 if counts.size else np.zeros(0, dtype=bool)
    n_pairable = int(pairable.sum())
    if n_pairable == 0:
        return undefined("no item has two or more ratings (nothing is pairable)", n=0)
    if np.count_nonzero(counts[pairable].sum(axis=0)) < 2:
        return undefined(SINGLE_LABEL_REASON, n=n_pairable)
    values = (
        np.asarray(categories, dtype=float) if level == "interval" else np.arange(k, dtype=float)
    )
    data = np.where(matrix >= 0, values[np.clip(matrix, 0, None)], np.nan)
    value = krippendorff.alpha(
        reliability_data=data, level_of_measurement=level, value_domain=values
    )
    extra = {"level": level, "n_pairable_values": int(counts[pairable].sum())}
    low = high = None
    if n_resamples == 0:
        extra.update(ci_reason("no_resamples"))
    elif n_pairable < MIN_BOOTSTRAP_UNITS:
        extra.update(ci_reason("too_few_items"))
    else:
        low, high, n_finite = _bootstrap(
            counts[pairable], level, values, n_resamples, confidence, seed
        )
        extra.update(n_resamples=n_resamples, n_resamples_defined=n_finite, seed=seed)
        if n_finite == 0:
            extra.update(ci_reason("undefined_in_every_resample"))
        elif has_zero_width(low, high):
            low = high = None
            extra.update(ci_reason("zero_width"))
        elif not holds_estimate(value, low, high):
            low = high = None
            extra.update(ci_reason("excludes_estimate"))
    if finite_or_none(value) is None:
        return undefined("alpha is undefined for these ratings", n=n_pairable, **extra)
    return Stat(value=float(value), ci_low=low, ci_high=high, n=n_pairable, extra=extra)


def _bootstrap(counts, level, values, n_resamples, confidence, seed):
    rng = np.random.default_rng(seed)
    n_items = counts.shape[0]
    per_item = item_coincidences(counts).reshape(n_items, -1)
    draws = rng.integers(0, n_items, size=(n_resamples, n_items))
    weights = bootstrap.draw_counts(draws, n_items)
    k = counts.shape[1]
    coincidences = (weights @ per_item).reshape(n_resamples, k, k)
    low, high, n_undefined = bootstrap.percentile_interval(
        _alpha_from_coincidence(coincidences, level, values), confidence=confidence
    )
    return finite_or_none(low), finite_or_none(high), n_resamples - int(n_undefined)

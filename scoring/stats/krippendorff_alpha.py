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
from scoring.stats.parameters import (
    check_choice,
    check_confidence,
    check_integer,
    check_same_length,
)
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
    """Krippendorff's alpha for long-format ratings with missing data, and its bootstrap CI.

    docs/metrics.md, "Krippendorff's alpha". α = 1 − D_o / D_e from the coincidence matrix of
    the pairable items (two or more ratings); the point estimate comes from the ``krippendorff``
    package (the reference implementation). The interval is a percentile bootstrap over items,
    withheld (null with ``extra["ci_reason"]``) when fewer than five items are pairable, it
    has zero width, or it excludes α itself.

    Parameters
    ----------
    items, raters, labels : array-like
        Long-format ratings: the item, the rater and the label of each rating, the same length.
    level : {"nominal", "ordinal", "interval"}, default "nominal"
        The level of measurement, which sets the distance between two labels.
    categories : list, optional
        The label set; its order ranks ordinal labels, and at the interval level its entries
        must be numbers. Default: every label seen, sorted.
    n_resamples : int, default 0
        Bootstrap resamples of the items for the interval; 0 gives no interval.
    confidence : float, default 0.95
        Two-sided confidence level of the interval, in (0, 1).
    seed : int, default 0
        Seed of the bootstrap's ``numpy.random.default_rng``.

    Returns
    -------
    Stat
        ``value`` α, ``ci_low``/``ci_high``, ``n`` the pairable items; ``extra`` holds ``level``,
        ``n_pairable_values`` and the bootstrap's settings. Undefined with a reason when nothing
        is pairable or one label is in use.

    Raises
    ------
    TypeError
        If ``n_resamples`` or ``seed`` is not an integer.
    ValueError
        If the three arrays differ in length, ``level`` is unknown, the interval level has
        categories that are not numbers, ``n_resamples`` is negative, or ``confidence`` is
        outside (0, 1).

    References
    ----------
    .. [1] K. Krippendorff, "Computing Krippendorff's alpha-reliability", University of
       Pennsylvania, 2011 (the worked example below: α = 0.743 nominal, 0.849 interval).
    .. [2] A. F. Hayes and K. Krippendorff, "Answering the call for a standard reliability
       measure for coding data", *Communication Methods and Measures* 1(1):77-89, 2007 (the
       bootstrap).
    .. [3] The ``krippendorff`` Python package, ``krippendorff.alpha``.

    Examples
    --------
    Krippendorff's (2011) four observers of twelve units, None where an observer gave no
    value:

    >>> from scoring.stats import krippendorff_alpha
    >>> units = [
    ...     [1, 1, None, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2],
    ...     [1, 2, 3, 4], [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [None, 5, 5, 5],
    ...     [None, None, 1, 1], [None, None, 3, None],
    ... ]
    >>> cells = [(u, o, v) for u, row in enumerate(units) for o, v in enumerate(row)]
    >>> items, raters, labels = zip(*[cell for cell in cells if cell[2] is not None])
    >>> alpha = krippendorff_alpha(items, raters, labels, n_resamples=1000, seed=0)
    >>> round(alpha.value, 3), alpha.n, round(alpha.ci_low, 2), alpha.ci_high
    (0.743, 11, 0.41, 1.0)
    >>> interval = krippendorff_alpha(items, raters, labels, level="interval")
    >>> round(interval.value, 3)
    0.849
    """
    check_same_length(items=items, raters=raters, labels=labels)
    check_choice(level, "level", LEVELS)
    check_integer(n_resamples, "n_resamples", minimum=0)
    check_confidence(confidence)
    check_integer(seed, "seed")
    if level == "interval" and categories is not None:
        try:
            np.asarray(categories, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(
                f"categories must be numbers at the interval level, got {list(categories)!r}"
            ) from None
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

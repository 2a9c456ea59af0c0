"""The study's prediction-powered rate: a ratio of two PPI means with a cross-fitted λ.

docs/metrics.md, "Prediction-powered rates". A rate is θ = E[a] / E[d], over every item the judge
labelled: ``a`` the share of an item's labels that mark the outcome and count toward the rate,
``d`` the share that count (refusal: every label counts, d = 1 and θ is a plain mean; erasure,
substitution and combined: a label counts when it is not a refusal and carries a cue). Both parts
are prediction-powered over the same items, so the judge's labels of refusals it missed enter the
denominator's correction instead of being compared with a different labelled population.

θ̂ = Â / D̂, Â = λ̄ · mean_I(f_a) + Σ_L w_i (y_a,i − λ_i f_a,i) / Σ_L w_i (D̂ likewise), with
L the labelled items, I the imputed set (the unlabelled items under uniform sampling, the whole
population with inclusion probabilities, weights w = 1/π), and λ̄ = Σ_L w_i λ_i / Σ_L w_i. This
is the PPI++ M-estimator of E[a − θ d] = 0 (Angelopoulos, Duchi & Zrnic 2023) with one λ for
both parts.

λ is **cross-fitted**: λ_i, used for item i's residual, is the variance-minimising λ estimated
from the other labelled items (leave-one-out, i.e. n folds). λ_i is then independent of item i,
so under uniform sampling E[Â] = E[a] exactly (the plug-in λ of ``ppi.ppi_mean`` is correlated
with the residuals it scales and biases small cells: −0.005 to −0.011 at 60 labelled items).

The interval is the delta method: se² = [s²_L(w(y_a − λ̄ f_a) − θ̂ w(y_d − λ̄ f_d)) / n +
s²_I(λ̄ (f_a − θ̂ f_d)) / |I|] / D̂², s² with denominator n − 1 (weights rescaled to mean 1),
and θ̂ ± t_{n−1}·se: the variance is dominated by the n labelled residuals, and at 11 labelled
items the normal quantile under-covers.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import stats

from scoring.stats.parameters import check_confidence, check_integer, check_same_length
from scoring.stats.ppi import undefined_entry
from scoring.stats.result import CI_REASONS


def cross_fit_lambda(y, f, weights, *, n_imputed: int) -> np.ndarray:
    """Per labelled item i, the PPI++ λ estimated without it (leave-one-out), clipped to [0, 1].

    λ = Σ_j w_j² (y_j − ȳ)(f_j − f̄) / ((1 + n / n_imputed) Σ_j w_j² (f_j − f̄)²) over j ≠ i, ȳ
    and f̄ the w-weighted means without i: with w = 1 the λ that minimises
    Var(y − λf)/n + λ² Var(f)/N (ppi_py's ``_calc_lam_glm`` for a mean), estimated from labelled
    items only so that nothing in it depends on item i or on the imputed mean. 0 where f does not
    vary among the other items.
    """
    y, f, w = (np.asarray(x, dtype=float) for x in (y, f, weights))
    n = y.size
    if n < 2:
        return np.zeros(n)
    w2 = w**2

    def without(values):
        return np.sum(values) - values

    rest = without(w)
    mean_y, mean_f = without(w * y) / rest, without(w * f) / rest
    s, s_y, s_f = without(w2), without(w2 * y), without(w2 * f)
    covariance = without(w2 * y * f) - mean_y * s_f - mean_f * s_y + mean_y * mean_f * s
    variance = without(w2 * f * f) - 2 * mean_f * s_f + mean_f**2 * s
    scale = 1.0 + n / max(n_imputed, 1)
    varies = variance > 1e-12 * np.maximum(s, 1e-300)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(varies, covariance / (scale * variance), 0.0)
    return np.clip(np.nan_to_num(lam), 0.0, 1.0)


class RatioFit(NamedTuple):
    """A cell's entry and its per-item bootstrap terms (``ppi.resampled_means`` pairs) for the
    numerator Â and the denominator D̂; ``None`` terms when the estimate is undefined."""

    entry: dict
    numerator_terms: list | None
    denominator_terms: list | None


def _undefined(reason: str, n: int, big_n: int) -> RatioFit:
    return RatioFit(undefined_entry(reason, n, big_n), None, None)


def _sample_variance(values) -> float:
    return float(np.var(values, ddof=1)) if values.size > 1 else 0.0


def ppi_ratio_fit(
    y_num,
    f_num,
    y_den,
    f_den,
    labelled,
    imputed,
    *,
    weights=None,
    lam=None,
    n_unlabelled: int | None = None,
    confidence: float = 0.95,
) -> RatioFit:
    """The prediction-powered ratio Σ a / Σ d of one cell, with a cross-fitted λ.

    docs/metrics.md, "Prediction-powered rates"; the module docstring gives the estimator and
    its delta-method interval (θ̂ ± t_{n−1}·se). A rate whose denominator is itself uncertain
    (erasure: erased among the labels that are not a refusal and carry a cue) is the ratio of
    two prediction-powered means over the same items; with ``d`` = 1 it is a plain PPI++ mean.

    Parameters
    ----------
    y_num, f_num : array-like of float
        Per item, the human reference's and the judge's share of labels that mark the outcome
        and count toward the rate (``a``). ``y`` is read where ``labelled``, ``f`` where
        ``labelled`` or ``imputed``.
    y_den, f_den : array-like of float
        Per item, the human reference's and the judge's share of labels that count (``d``).
    labelled : array-like of bool
        The items with a human reference (all six arrays have one entry per item).
    imputed : array-like of bool
        The items whose judge labels form the imputed means: the unlabelled items under uniform
        sampling, the whole population with inclusion probabilities.
    weights : array-like of float, optional
        1/π of the labelled items (None: uniform sampling).
    lam : float or array-like, optional
        A fixed λ in [0, 1] (or one per item); None cross-fits it (leave-one-out).
    n_unlabelled : int, optional
        What the entry reports as ``n_unlabelled`` (default: the imputed items).
    confidence : float, default 0.95
        Two-sided confidence level of the interval, in (0, 1).

    Returns
    -------
    RatioFit
        ``entry``: ``{estimate, ci_low, ci_high, lambda (λ̄), n_labelled, n_unlabelled, se}``,
        null with ``reason`` with fewer than two labelled items, no imputed item or a
        denominator ≤ 0, the interval null with ``ci_reason(_code)`` when it cannot vary; and
        the per-item bootstrap terms of the numerator and denominator
        (``ppi.resampled_means``).

    Raises
    ------
    TypeError
        If ``n_unlabelled`` is not an integer.
    ValueError
        If the per-item arrays differ in length, a weight is not positive, ``lam`` is outside
        [0, 1], ``n_unlabelled`` is negative, or ``confidence`` is outside (0, 1).

    References
    ----------
    .. [1] A. N. Angelopoulos, J. C. Duchi and T. Zrnic, "PPI++: Efficient prediction-powered
       inference", arXiv:2311.01453, 2023 (the M-estimator and its power tuning).
    .. [2] V. Chernozhukov et al., "Double/debiased machine learning for treatment and
       structural parameters", *The Econometrics Journal* 21(1):C1-C68, 2018 (cross-fitting).
    .. [3] T. Zrnic and E. J. Candès, "Active statistical inference", ICML 2024 (the inverse-
       probability weights).

    Examples
    --------
    Twenty judged items, the first eight with a human reference; ``d`` marks the labels that
    count (not a refusal), ``a`` those that also mark the outcome:

    >>> import numpy as np
    >>> from scoring.stats import ppi_ratio_fit
    >>> f_den = np.array([1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 0, 1, 1.0])
    >>> f_num = np.array([1, 0, 1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 1, 0, 0, 1.0])
    >>> y_den = np.array([1, 1, 1, 0, 1, 1, 0, 1] + [0] * 12, dtype=float)
    >>> y_num = np.array([1, 0, 1, 0, 0, 0, 0, 1] + [0] * 12, dtype=float)
    >>> labelled = np.arange(20) < 8
    >>> entry = ppi_ratio_fit(y_num, f_num, y_den, f_den, labelled, ~labelled).entry
    >>> round(entry["estimate"], 4), round(entry["lambda"], 4), round(entry["se"], 4)
    (0.4684, 0.3665, 0.1931)
    >>> ppi_ratio_fit(y_num, f_num, y_den, f_den, labelled, ~labelled, lam=0.0).entry["estimate"]
    0.5
    """
    check_same_length(
        y_num=y_num, f_num=f_num, y_den=y_den, f_den=f_den, labelled=labelled, imputed=imputed
    )
    if weights is not None:
        check_same_length(labelled=labelled, weights=weights)
        positive = np.asarray(weights, dtype=float)[np.asarray(labelled, dtype=bool)]
        if np.any(positive[np.isfinite(positive)] <= 0):
            raise ValueError("weights must be positive (1/π) on the labelled items")
    if lam is not None:
        lam_values = np.asarray(lam, dtype=float)
        if np.any(~np.isfinite(lam_values) | (lam_values < 0) | (lam_values > 1)):
            raise ValueError(f"lam must lie in [0, 1], got {lam!r}")
    if n_unlabelled is not None:
        check_integer(n_unlabelled, "n_unlabelled", minimum=0)
    check_confidence(confidence)
    labelled = np.asarray(labelled, dtype=bool)
    imputed = np.asarray(imputed, dtype=bool)
    y_num, f_num, y_den, f_den = (
        np.nan_to_num(np.asarray(x, dtype=float)) for x in (y_num, f_num, y_den, f_den)
    )
    w_all = np.ones(labelled.size) if weights is None else np.asarray(weights, dtype=float)
    w_all = np.where(labelled, np.nan_to_num(w_all, nan=1.0), 0.0)
    n, big_n = int(labelled.sum()), int(imputed.sum())
    reported_n = big_n if n_unlabelled is None else int(n_unlabelled)
    if n < 2:
        return _undefined(
            "fewer than two items with a human reference and a judge label", n, reported_n
        )
    if big_n == 0:
        return _undefined("no item with a judge label and no human label", n, reported_n)
    w = w_all[labelled] / w_all[labelled].mean()
    ya, fa, yd, fd = y_num[labelled], f_num[labelled], y_den[labelled], f_den[labelled]
    ia, id_ = f_num[imputed], f_den[imputed]

    def parts(lam_items, lam_bar):
        numerator = lam_bar * ia.mean() + np.sum(w * (ya - lam_items * fa)) / n
        denominator = lam_bar * id_.mean() + np.sum(w * (yd - lam_items * fd)) / n
        return numerator, denominator

    if lam is None:
        # The direction in which λ acts: the ratio's estimating function a − θ d at the classic
        # (λ = 1) estimate, as ppi_py centres its gradients at the classic estimate.
        top, bottom = parts(np.ones(n), 1.0)
        start = top / bottom if bottom > 0 else 0.0
        lam_items = cross_fit_lambda(ya - start * yd, fa - start * fd, w, n_imputed=big_n)
    else:
        lam_items = np.broadcast_to(np.asarray(lam, dtype=float), labelled.shape)[labelled]
        lam_items = np.asarray(lam_items, dtype=float) * np.ones(n)
    lam_bar = float(np.sum(w * lam_items) / n)
    numerator, denominator = parts(lam_items, lam_bar)
    if not denominator > 0:
        return _undefined(
            "the estimated share of items that count toward the rate is 0 or below", n, reported_n
        )
    estimate = float(numerator / denominator)
    residual = w * ((ya - lam_bar * fa) - estimate * (yd - lam_bar * fd))
    imputed_part = lam_bar * (ia - estimate * id_)
    se = float(
        np.sqrt(_sample_variance(residual) / n + _sample_variance(imputed_part) / big_n)
        / denominator
    )
    z = float(stats.t.ppf(0.5 + confidence / 2.0, n - 1))
    entry = {
        "estimate": estimate,
        "ci_low": estimate - z * se,
        "ci_high": estimate + z * se,
        "lambda": lam_bar,
        "n_labelled": n,
        "n_unlabelled": reported_n,
        "se": se,
    }
    single_class = np.unique(np.concatenate([ya, f_num[labelled | imputed]])).size < 2
    if single_class or se <= 0:
        code = "single_class" if single_class else "zero_width"
        entry.update(ci_low=None, ci_high=None, ci_reason=CI_REASONS[code], ci_reason_code=code)
    item_lam = np.zeros(labelled.size)
    item_lam[labelled] = lam_items
    in_imputed = imputed.astype(float)

    def terms(y, f):
        return [
            (lam_bar * f * in_imputed, in_imputed),
            (np.where(labelled, w_all * (y - item_lam * f), 0.0), w_all),
        ]

    return RatioFit(entry, terms(y_num, f_num), terms(y_den, f_den))

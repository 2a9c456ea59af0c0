"""Prediction-powered estimates of a mean: PPI++ and its inverse-probability-weighted (active) form.

docs/metrics.md, "Prediction-powered rates". A judge labels every item (``f``); humans label a
sample (``y``, the human reference). PPI++ (Angelopoulos, Duchi & Zrnic 2023) corrects the
judge's mean with the labelled items' residuals, scaled by a power-tuning λ in [0, 1] (λ = 1 is
classic PPI, Angelopoulos et al. 2023; λ = 0 the human-only mean):

- uniform sampling (``ppi_mean``): θ = mean_L(y) + λ (mean_U(f) − mean_L(f)), U the unlabelled
  items, exactly ``ppi_py.ppi_mean_pointestimate`` / ``ppi_mean_ci``;
- known inclusion probabilities π (``ppi_mean_weighted``, active inference, Zrnic & Candès 2024):
  θ = λ mean_all(f) + Σ_L (y_i − λ f_i)/π_i / Σ_L 1/π_i over the M items of the population
  (the rectifier is the Hájek-weighted mean of the labelled residuals) — exactly ``ppi_py``
  with every item as its "unlabelled" set and labelled weights 1/π_i (ppi_py rescales weights
  to sum to n).

The cluster bootstrap of these estimates (for Δ and the differences to the neutral baseline) is
``resampled_means``: every estimate is a sum of ratios of per-cluster sums, so one matrix product
gives every term of every estimate in all resamples.
"""

from __future__ import annotations

import numpy as np

from scoring.stats.parameters import check_confidence, check_real, check_same_length
from scoring.stats.proportions import z_value
from scoring.stats.result import CI_REASONS


def _sums(values, mask):
    return np.sum(np.where(mask, values, 0.0), axis=-1)


def _population_variance(values, mask, count):
    mean = _sums(values, mask) / count
    return np.maximum(_sums(values**2, mask) / count - mean**2, 0.0)


def ppi_moments(y, f, labelled, unlabelled, weights, *, confidence: float = 0.95, lam=None):
    """The PPI++ mean from masks over one item axis (the last), vectorised over any leading axes.

    ``labelled`` marks the items with a human reference ``y`` (its ``weights`` rescaled to mean 1
    over them, as ppi_py does), ``unlabelled`` the items whose judge labels ``f`` form the
    imputed mean. ``lam`` None tunes λ as ppi_py's ``_calc_lam_glm`` does for a mean (clipped to
    [0, 1]). Returns arrays ``estimate, se, low, high, lam, n, big_n``; no checks (callers check).
    """
    y = np.where(labelled, np.nan_to_num(np.asarray(y, dtype=float)), 0.0)
    f = np.nan_to_num(np.asarray(f, dtype=float))
    n = np.sum(labelled, axis=-1).astype(float)
    big_n = np.sum(unlabelled, axis=-1).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(labelled, weights, 0.0)
        w = w * (n / np.sum(w, axis=-1))[..., None]
        nn, bb = n[..., None], big_n[..., None]
        if lam is None:
            classic = _sums(f, unlabelled) / big_n + _sums(w * (y - f), labelled) / n
            c = classic[..., None]
            grads, grads_hat = w * (y - c), w * (f - c)
            covariance = 2.0 * (
                _sums(grads * grads_hat, labelled) / n
                - (_sums(grads, labelled) / n) * (_sums(grads_hat, labelled) / n)
            )
            hat_unlabelled = f - c
            total = n + big_n
            mean_hat = (_sums(grads_hat, labelled) + _sums(hat_unlabelled, unlabelled)) / total
            variance = (
                _sums(grads_hat**2, labelled)
                + _sums(hat_unlabelled**2, unlabelled)
                - total * mean_hat**2
            ) / (total - 1)
            lam = np.where(
                variance > 0,
                np.clip(covariance / (2.0 * (1.0 + n / big_n) * variance), 0.0, 1.0),
                0.0,
            )
        lam = np.asarray(lam, dtype=float) * np.ones_like(n)
        ll = lam[..., None]
        imputed, rectifier = ll * f, w * (y - ll * f)
        estimate = _sums(imputed, unlabelled) / big_n + _sums(rectifier, labelled) / n
        se = np.sqrt(
            _population_variance(imputed, unlabelled, bb[..., 0]) / big_n
            + _population_variance(rectifier, labelled, nn[..., 0]) / n
        )
    z = z_value(confidence)
    return {
        "estimate": estimate,
        "se": se,
        "low": estimate - z * se,
        "high": estimate + z * se,
        "lam": lam,
        "n": n,
        "big_n": big_n,
    }


def _call(y, f, f_unlabelled, w, *, lam, confidence) -> dict:
    """One cell through ``ppi_moments``: the labelled items, then the imputed set
    (``f_unlabelled``, which holds the labelled items too in the weighted form)."""
    n, size = y.size, f_unlabelled.size
    values_y = np.concatenate([y, np.zeros(size)])
    values_f = np.concatenate([f, f_unlabelled])
    labelled = np.arange(n + size) < n
    moments = ppi_moments(
        values_y,
        values_f,
        labelled,
        ~labelled,
        np.concatenate([w, np.ones(size)]),
        confidence=confidence,
        lam=lam,
    )
    return {key: float(value) for key, value in moments.items()}


def undefined_entry(reason: str, n: int, big_n: int) -> dict:
    """A PPI estimate that cannot be computed: null estimate, interval and λ, with the reason."""
    return {
        "estimate": None,
        "reason": reason,
        "ci_low": None,
        "ci_high": None,
        "lambda": None,
        "n_labelled": n,
        "n_unlabelled": big_n,
    }


def _entry(result: dict, lam: float, n: int, big_n: int, single_class: bool) -> dict:
    entry = {
        "estimate": result["estimate"],
        "ci_low": result["low"],
        "ci_high": result["high"],
        "lambda": lam,
        "n_labelled": n,
        "n_unlabelled": big_n,
        "se": result["se"],
    }
    if single_class or result["se"] <= 0:
        code = "single_class" if single_class else "zero_width"
        entry.update(ci_low=None, ci_high=None, ci_reason=CI_REASONS[code], ci_reason_code=code)
    return entry


def _single_class(y, f) -> bool:
    return np.unique(np.concatenate([y, f])).size < 2


def ppi_mean(
    y_labelled, f_labelled, f_unlabelled, *, confidence: float = 0.95, lam: float | None = None
) -> dict:
    """PPI++ mean and its normal interval under uniform sampling.

    docs/metrics.md, "Prediction-powered rates". A judge labels every item (``f``); humans
    label a uniform sample (``y``). θ = mean_L(y) + λ (mean_U(f) − mean_L(f)), with the
    power-tuning λ in [0, 1] chosen to minimise the variance (λ = 1 is classic PPI, λ = 0 the
    human-only mean); exactly ``ppi_py.ppi_mean_pointestimate`` and ``ppi_mean_ci``.

    Parameters
    ----------
    y_labelled : array-like of float
        The human reference of each labelled item (0/1 for a rate).
    f_labelled : array-like of float
        The judge's label of the same items, the same length.
    f_unlabelled : array-like of float
        The judge's label of every item without a human label.
    confidence : float, default 0.95
        Two-sided confidence level of the normal interval, in (0, 1).
    lam : float, optional
        A fixed λ in [0, 1]; None tunes it as ppi_py's ``_calc_lam_glm`` does for a mean.

    Returns
    -------
    dict
        ``{estimate, ci_low, ci_high, lambda, n_labelled, n_unlabelled, se}``; ``estimate``
        null with ``reason`` with fewer than two labelled items or no unlabelled item, the
        interval null with ``ci_reason(_code)`` when every label is one class.

    Raises
    ------
    TypeError
        If ``lam`` is not a number.
    ValueError
        If ``y_labelled`` and ``f_labelled`` differ in length, ``lam`` is outside [0, 1], or
        ``confidence`` is outside (0, 1).

    References
    ----------
    .. [1] A. N. Angelopoulos, S. Bates, C. Fannjiang, M. I. Jordan and T. Zrnic,
       "Prediction-powered inference", *Science* 382(6671):669-674, 2023.
    .. [2] A. N. Angelopoulos, J. C. Duchi and T. Zrnic, "PPI++: Efficient prediction-powered
       inference", arXiv:2311.01453, 2023.
    .. [3] The ``ppi_py`` package, ``ppi_mean_pointestimate`` and ``ppi_mean_ci`` (the tests'
       reference).

    Examples
    --------
    >>> from scoring.stats import ppi_mean
    >>> y = [1, 0, 1, 1, 0, 0, 1, 0, 1, 1]
    >>> f = [1, 0, 1, 0, 0, 0, 1, 1, 1, 1]
    >>> f_unlabelled = [1, 0, 0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 0]
    >>> result = ppi_mean(y, f, f_unlabelled)
    >>> round(result["estimate"], 5), round(result["lambda"], 4), result["n_unlabelled"]
    (0.56375, 0.3625, 20)
    >>> round(result["ci_low"], 4), round(result["ci_high"], 4)
    (0.2961, 0.8314)
    >>> ppi_mean(y, f, f_unlabelled, lam=0.0)["estimate"]  # the human-only mean
    0.6
    """
    check_same_length(y_labelled=y_labelled, f_labelled=f_labelled)
    check_confidence(confidence)
    if lam is not None:
        check_real(lam, "lam", low=0.0, high=1.0)
    y = np.asarray(y_labelled, dtype=float)
    f = np.asarray(f_labelled, dtype=float)
    f_unlabelled = np.asarray(f_unlabelled, dtype=float)
    n, big_n = int(y.size), int(f_unlabelled.size)
    if n < 2:
        return undefined_entry(
            "fewer than two items with a human reference and a judge label", n, big_n
        )
    if big_n == 0:
        return undefined_entry("no item with a judge label and no human label", n, big_n)
    result = _call(y, f, f_unlabelled, np.ones(n), lam=lam, confidence=confidence)
    single = _single_class(y, np.concatenate([f, f_unlabelled]))
    return _entry(result, result["lam"], n, big_n, single)


def ppi_mean_weighted(
    y_labelled,
    f_labelled,
    f_all,
    inclusion_probability,
    *,
    confidence: float = 0.95,
    lam: float | None = None,
) -> dict:
    """Active-inference PPI++ mean with inverse-probability weights.

    docs/metrics.md, "Prediction-powered rates". For a sample drawn with known inclusion
    probabilities π (e.g. more human labels where the judges are unsure):
    θ = λ mean_all(f) + Σ_L (y_i − λ f_i)/π_i / Σ_L 1/π_i over the M items of the population;
    exactly ``ppi_py`` with every item as its "unlabelled" set and labelled weights 1/π_i.

    Parameters
    ----------
    y_labelled : array-like of float
        The human reference of each labelled item.
    f_labelled : array-like of float
        The judge's label of the same items, the same length.
    f_all : array-like of float
        The judge's labels of every item of the population, the labelled ones included.
    inclusion_probability : array-like of float
        π_i of each labelled item, in (0, 1], the same length as ``y_labelled``.
    confidence : float, default 0.95
        Two-sided confidence level of the normal interval, in (0, 1).
    lam : float, optional
        A fixed λ in [0, 1]; None tunes it.

    Returns
    -------
    dict
        The shape of ``ppi_mean``'s; ``n_unlabelled`` counts the population's items without a
        human label.

    Raises
    ------
    TypeError
        If ``lam`` is not a number.
    ValueError
        If the labelled arrays differ in length, ``f_all`` is shorter than them, a probability
        lies outside (0, 1], ``lam`` is outside [0, 1], or ``confidence`` is outside (0, 1).

    References
    ----------
    .. [1] T. Zrnic and E. J. Candès, "Active statistical inference", *Proceedings of the 41st
       International Conference on Machine Learning*, PMLR 235, 2024.
    .. [2] A. N. Angelopoulos, J. C. Duchi and T. Zrnic, "PPI++: Efficient prediction-powered
       inference", arXiv:2311.01453, 2023.

    Examples
    --------
    >>> from scoring.stats import ppi_mean_weighted
    >>> y = [1, 0, 1, 1, 0, 0, 1, 0, 1, 1]
    >>> f = [1, 0, 1, 0, 0, 0, 1, 1, 1, 1]
    >>> f_all = f + [1, 0, 0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 0]
    >>> pi = [0.5] * 5 + [0.25] * 5
    >>> result = ppi_mean_weighted(y, f, f_all, pi)
    >>> round(result["estimate"], 4), round(result["lambda"], 4), result["n_unlabelled"]
    (0.5412, 0.441, 20)
    """
    n_labelled = check_same_length(
        y_labelled=y_labelled, f_labelled=f_labelled, inclusion_probability=inclusion_probability
    )
    if len(f_all) < n_labelled:
        raise ValueError(
            f"f_all must hold every item, the {n_labelled} labelled ones included; got {len(f_all)}"
        )
    check_confidence(confidence)
    if lam is not None:
        check_real(lam, "lam", low=0.0, high=1.0)
    y = np.asarray(y_labelled, dtype=float)
    f = np.asarray(f_labelled, dtype=float)
    f_all = np.asarray(f_all, dtype=float)
    pi = np.asarray(inclusion_probability, dtype=float)
    n, big_m = int(y.size), int(f_all.size)
    if np.any(~np.isfinite(pi)) or np.any(pi <= 0) or np.any(pi > 1):
        raise ValueError(
            "inclusion_probability must lie in (0, 1] (inclusion probabilities are positive)"
        )
    if n < 2:
        return undefined_entry(
            "fewer than two items with a human reference and a judge label", n, big_m - n
        )
    result = _call(y, f, f_all, 1.0 / pi, lam=lam, confidence=confidence)
    return _entry(result, result["lam"], n, big_m - n, _single_class(y, f_all))


def item_terms(y, f, labelled, unlabelled, pi, *, lam: float, weighted: bool):
    """Per-item (numerator, denominator) pairs whose ratios of sums add up to the estimate.

    Uniform: θ = Σ_U λf / |U| + Σ_L (y − λf) / |L|. Weighted: θ = Σ_pop λf / M +
    Σ_L (y − λf)/π / Σ_L 1/π. Items outside the population carry zeros.
    """
    y = np.where(labelled, y, 0.0)
    f = np.where(labelled | unlabelled, f, 0.0)
    if weighted:
        pi = np.where(labelled, pi, 1.0)
        population = (labelled | unlabelled).astype(float)
        return [
            (lam * f * population, population),
            (np.where(labelled, (y - lam * f) / pi, 0.0), np.where(labelled, 1.0 / pi, 0.0)),
        ]
    return [
        (np.where(unlabelled, lam * f, 0.0), unlabelled.astype(float)),
        (np.where(labelled, y - lam * f, 0.0), labelled.astype(float)),
    ]


def resampled_means(terms_by_column, cluster_codes, counts, n_clusters: int) -> np.ndarray:
    """(n_resamples, n_columns) estimates in every cluster-bootstrap resample (``counts``: draw
    counts per cluster, ``disparity.ClusterResample.counts``); NaN where a term has no item."""
    sums, owners = [], []
    for column, terms in enumerate(terms_by_column):
        for numerator, denominator in terms:
            sums.append(np.bincount(cluster_codes, weights=numerator, minlength=n_clusters))
            sums.append(np.bincount(cluster_codes, weights=denominator, minlength=n_clusters))
            owners.append(column)
    out = np.zeros((counts.shape[0], len(terms_by_column)))
    if not sums:
        return out
    resampled = counts @ np.column_stack(sums)  # one product for every term of every column
    top, bottom = resampled[:, 0::2], resampled[:, 1::2]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1), np.nan)
    np.add.at(out.T, np.asarray(owners), ratios.T)
    return out

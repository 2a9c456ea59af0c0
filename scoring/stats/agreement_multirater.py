"""Agreement among many raters with missing ratings: per-item percent agreement, pairwise-mean
Cohen's kappa, Fleiss' kappa, Krippendorff's alpha (with an item bootstrap) and Gwet's AC1.

docs/metrics.md, "Inter-annotator agreement". Input is long format: one rating per row as
positional ``items, raters, labels`` arrays; ``categories`` fixes the label set and its order.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from scoring.stats import bootstrap
from scoring.stats.agreement import kappa_from_confusion
from scoring.stats.parameters import check_integer, check_same_length
from scoring.stats.result import SINGLE_LABEL_REASON, Stat, undefined


def _categories(labels, categories):
    if categories is None:
        categories = sorted(set(np.asarray(labels, dtype=object).tolist()))
    return list(categories)


def item_label_counts(items, labels, *, categories=None) -> tuple[list, np.ndarray, list]:
    """The items × categories count matrix of long-format ratings, as Fleiss' kappa and Gwet's
    AC1 take it.

    docs/metrics.md, "Inter-annotator agreement". Labels outside ``categories`` are dropped.

    Parameters
    ----------
    items : array-like
        The item of each rating.
    labels : array-like
        The label of each rating, the same length as ``items``.
    categories : list, optional
        The label set and its order (the matrix's columns). Default: every label seen, sorted.

    Returns
    -------
    item_ids : list
        The items, in the order of the matrix's rows (sorted).
    counts : numpy.ndarray
        ``counts[i, k]``: how many ratings of item i carry category k.
    categories : list
        The categories, in the order of the matrix's columns.

    Raises
    ------
    ValueError
        If ``items`` and ``labels`` differ in length.

    References
    ----------
    .. [1] J. L. Fleiss, "Measuring nominal scale agreement among many raters", *Psychological
       Bulletin* 76(5):378-382, 1971 (the n_ij table).

    Examples
    --------
    >>> from scoring.stats import item_label_counts
    >>> ids, counts, categories = item_label_counts(
    ...     ["u1", "u1", "u1", "u2", "u2", "u3"], ["a", "a", "b", "b", "b", "a"]
    ... )
    >>> ids, counts.tolist(), categories
    (['u1', 'u2', 'u3'], [[2, 1], [0, 2], [1, 0]], ['a', 'b'])
    """
    check_same_length(items=items, labels=labels)
    categories = _categories(labels, categories)
    position = {label: i for i, label in enumerate(categories)}
    label_codes = np.array(
        [position.get(x, -1) for x in np.asarray(labels, dtype=object).tolist()], dtype=np.int64
    )
    keep = label_codes >= 0
    item_codes, item_ids = bootstrap.encode(np.asarray(items, dtype=object)[keep])
    k = len(categories)
    flat = np.bincount(item_codes * k + label_codes[keep], minlength=len(item_ids) * k)
    return item_ids, flat.reshape(len(item_ids), k), categories


def percent_agreement_items(counts) -> Stat:
    """Mean over items with ≥ 2 ratings of the share of agreeing rater pairs, Σ n_k(n_k−1) / m(m−1)."""
    counts = np.asarray(counts, dtype=float)
    m = counts.sum(axis=1) if counts.size else np.zeros(0)
    usable = m >= 2
    if not usable.any():
        return undefined("no item has two or more ratings", n=0)
    share = (counts[usable] * (counts[usable] - 1)).sum(axis=1) / (m[usable] * (m[usable] - 1))
    return Stat(value=float(share.mean()), n=int(usable.sum()))


def fleiss_kappa(counts) -> Stat:
    """Fleiss (1971) kappa over items that all carry the same number m ≥ 2 of ratings.

    docs/metrics.md, "Inter-annotator agreement". κ = (P̄ − P̄_e) / (1 − P̄_e), with P̄ the mean
    share of agreeing rater pairs per item and P̄_e the sum of squared category shares.
    Degenerate input never raises: unequal counts, one rating per item, fewer than two items or
    a single label in use give an undefined Stat with its reason (``study_metrics`` uses the
    items with the most common count, ``fleiss_kappa_modal``).

    Parameters
    ----------
    counts : array-like of shape (n_items, n_categories)
        ``counts[i, k]``: how many raters put item i in category k (``item_label_counts``
        builds it from long-format ratings).

    Returns
    -------
    Stat
        ``value`` κ, ``n`` the items and ``extra["ratings_per_item"]``; undefined with a reason
        for degenerate input.

    Raises
    ------
    TypeError
        If ``counts`` is not numeric.
    ValueError
        If ``counts`` is not a two-dimensional matrix or holds a negative count.

    References
    ----------
    .. [1] J. L. Fleiss, "Measuring nominal scale agreement among many raters", *Psychological
       Bulletin* 76(5):378-382, 1971.
    .. [2] statsmodels ``statsmodels.stats.inter_rater.fleiss_kappa`` (the tests' reference).

    Examples
    --------
    Ten items, fourteen raters, five categories (the worked example of Wikipedia's "Fleiss'
    kappa" article), κ = 0.210:

    >>> import numpy as np
    >>> counts = np.array([
    ...     [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0],
    ...     [2, 2, 8, 1, 1], [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2],
    ...     [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ... ])
    >>> from scoring.stats import fleiss_kappa
    >>> stat = fleiss_kappa(counts)
    >>> round(stat.value, 3), stat.n, stat.extra["ratings_per_item"]
    (0.21, 10, 14)
    """
    _check_count_matrix(counts)
    counts = np.asarray(counts, dtype=float)
    if counts.ndim != 2 or counts.shape[0] == 0:
        return undefined("no items", n=0)
    m = counts.sum(axis=1)
    n_items = int(counts.shape[0])
    if not np.all(m == m[0]):
        return undefined(
            "items carry unequal numbers of ratings (Fleiss' kappa needs the same number on "
            "every item)",
            n=n_items,
        )
    if m[0] < 2:
        return undefined("every item has fewer than two ratings", n=n_items)
    if n_items < 2:
        # With one item the chance term is that item's own label shares, so κ ≤ 0 whatever
        # the raters did: not an agreement statistic.
        return undefined("Fleiss' kappa needs at least two items", n=n_items)
    agreement = ((counts * (counts - 1)).sum(axis=1) / (m * (m - 1))).mean()
    shares = counts.sum(axis=0) / counts.sum()
    chance = float((shares**2).sum())
    if chance >= 1.0 - 1e-12:
        return undefined(SINGLE_LABEL_REASON, n=n_items)
    return Stat(
        value=float((agreement - chance) / (1.0 - chance)),
        n=n_items,
        extra={"ratings_per_item": int(m[0])},
    )


def fleiss_kappa_modal(counts) -> Stat:
    """Fleiss' kappa over the items whose number of ratings equals the most common count (≥ 2).

    Ties go to the larger count: it is the study's overlap when some items lost an annotation.
    """
    counts = np.asarray(counts)
    m = counts.sum(axis=1) if counts.size else np.zeros(0, dtype=int)
    m = m[m >= 2]
    if m.size == 0:
        return undefined("no item has two or more ratings", n=0)
    values, frequency = np.unique(m, return_counts=True)
    modal = int(values[np.flatnonzero(frequency == frequency.max())[-1]])
    selected = counts[counts.sum(axis=1) == modal]
    return fleiss_kappa(selected)


def gwet_ac1(counts, *, n_categories: int | None = None) -> Stat:
    """Gwet's AC1 for many raters with missing ratings.

    docs/metrics.md, "Inter-annotator agreement". p_a = mean over items with ≥ 2 ratings of
    Σ r_ik(r_ik − 1) / r_i(r_i − 1); π_k = mean over items with ≥ 1 rating of r_ik / r_i;
    p_e = Σ π_k(1 − π_k) / (Q − 1), Q = number of categories; AC1 = (p_a − p_e) / (1 − p_e).
    Undefined, with κ's and α's reason, when every rating on the pairable items is the same
    label.

    Parameters
    ----------
    counts : array-like of shape (n_items, n_categories)
        ``counts[i, k]``: how many raters put item i in category k; items may carry different
        numbers of ratings (``item_label_counts``).
    n_categories : int, optional
        Q, the size of the label scheme, when it has categories nobody used (at least the
        matrix's number of columns). Default: the number of columns.

    Returns
    -------
    Stat
        ``value`` AC1 and ``n`` the items with two or more ratings; ``extra`` holds
        ``p_observed`` and ``p_expected``. Undefined with a reason when no item has two ratings,
        one label is in use, or Q < 2.

    Raises
    ------
    TypeError
        If ``counts`` is not numeric or ``n_categories`` is not an integer.
    ValueError
        If ``counts`` is not a two-dimensional matrix, holds a negative count, or
        ``n_categories`` is smaller than its number of columns.

    References
    ----------
    .. [1] K. L. Gwet, "Computing inter-rater reliability and its variance in the presence of
       high agreement", *British Journal of Mathematical and Statistical Psychology*
       61(1):29-48, 2008, eq. 14-15.
    .. [2] K. L. Gwet, *Handbook of Inter-Rater Reliability*, 4th ed., 2014, ch. 4; the R
       package irrCAC, ``gwet.ac1.raw`` (the tests' reference).

    Examples
    --------
    Krippendorff's four observers of twelve units, one rating missing here and there (irrCAC's
    ``cac.raw4raters``: AC1 = 0.77544):

    >>> from scoring.stats import gwet_ac1, item_label_counts
    >>> units = [
    ...     [1, 1, None, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2],
    ...     [1, 2, 3, 4], [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [None, 5, 5, 5],
    ...     [None, None, 1, 1], [None, None, 3, None],
    ... ]
    >>> cells = [(u, v) for u, row in enumerate(units) for v in row if v is not None]
    >>> _, counts, _ = item_label_counts(
    ...     [u for u, _ in cells], [v for _, v in cells], categories=[1, 2, 3, 4, 5]
    ... )
    >>> stat = gwet_ac1(counts)
    >>> round(stat.value, 5), round(stat.extra["p_observed"], 6), stat.n
    (0.77544, 0.818182, 11)
    """
    _check_count_matrix(counts)
    if n_categories is not None:
        columns = np.shape(counts)[1] if np.ndim(counts) == 2 else 1
        check_integer(n_categories, "n_categories", minimum=columns)
    counts = np.asarray(counts, dtype=float)
    q = counts.shape[1] if n_categories is None else int(n_categories)
    m = counts.sum(axis=1) if counts.size else np.zeros(0)
    usable = m >= 2
    if q < 2:
        return undefined(
            "AC1 needs at least two categories in the label scheme", n=int(usable.sum())
        )
    if not usable.any():
        return undefined("no item has two or more ratings", n=0)
    if np.count_nonzero(counts[usable].sum(axis=0)) < 2:
        return undefined(SINGLE_LABEL_REASON, n=int(usable.sum()))
    rated = m >= 1
    pi = (counts[rated] / m[rated, None]).mean(axis=0)
    pairable, m_pairable = counts[usable], m[usable]
    p_a = ((pairable * (pairable - 1)).sum(axis=1) / (m_pairable * (m_pairable - 1))).mean()
    p_e = float((pi * (1.0 - pi)).sum() / (q - 1))
    return Stat(
        value=float((p_a - p_e) / (1.0 - p_e)),
        n=int(usable.sum()),
        extra={"p_observed": float(p_a), "p_expected": p_e},
    )


def _check_count_matrix(counts) -> None:
    """An items × categories matrix of counts: empty, or two-dimensional and not negative."""
    try:
        values = np.asarray(counts, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"counts must be a matrix of numbers, got {counts!r}") from None
    if values.size and values.ndim != 2:
        raise ValueError(
            f"counts must be an items × categories matrix (two-dimensional), got shape "
            f"{values.shape}"
        )
    if np.any(values < 0):
        raise ValueError("counts must not be negative")


def rating_matrix(items, raters, labels, *, categories=None) -> tuple[list, list, np.ndarray, list]:
    """(rater ids, item ids, raters × items matrix of category codes with −1 for missing, categories).

    A rater's repeated rating of one item keeps the last one.
    """
    categories = _categories(labels, categories)
    position = {label: i for i, label in enumerate(categories)}
    frame = pd.DataFrame(
        {"item": np.asarray(items, dtype=object), "rater": np.asarray(raters, dtype=object)}
    )
    frame["code"] = [position.get(x, -1) for x in np.asarray(labels, dtype=object).tolist()]
    frame = frame[frame["code"] >= 0].drop_duplicates(["item", "rater"], keep="last")
    rater_codes, rater_ids = bootstrap.encode(frame["rater"].to_numpy())
    item_codes, item_ids = bootstrap.encode(frame["item"].to_numpy())
    matrix = np.full((len(rater_ids), len(item_ids)), -1, dtype=np.int64)
    matrix[rater_codes, item_codes] = frame["code"].to_numpy()
    return rater_ids, item_ids, matrix, categories


def pairwise_cohen_kappa(items, raters, labels, *, categories=None, min_items: int = 10) -> Stat:
    """Mean of Cohen's kappa over rater pairs sharing ≥ ``min_items`` items; the pairs are listed.

    docs/metrics.md, "Inter-annotator agreement". Pairs whose kappa is undefined (e.g. one
    shared label only) are listed with their reason and left out of the mean. A rater's repeated
    rating of one item keeps the last one.

    Parameters
    ----------
    items, raters, labels : array-like
        Long-format ratings: the item, the rater and the label of each rating, the same length.
    categories : list, optional
        The label set and its order. Default: every label seen, sorted.
    min_items : int, default 10
        The fewest shared items a pair needs to enter the mean (at least 1).

    Returns
    -------
    Stat
        ``value`` the mean κ over the qualifying pairs and ``n`` their number; ``extra`` lists
        every ``pairs`` entry (``rater_a``, ``rater_b``, ``n_items``, ``kappa``) and
        ``n_pairs_below_min_items``. Undefined with a reason when no pair qualifies.

    Raises
    ------
    TypeError
        If ``min_items`` is not an integer.
    ValueError
        If the three arrays differ in length or ``min_items`` is below 1.

    References
    ----------
    .. [1] R. J. Light, "Measures of response agreement for qualitative data: some
       generalizations and alternatives", *Psychological Bulletin* 76(5):365-377, 1971 (the
       mean of pairwise kappas).
    .. [2] K. A. Hallgren, "Computing inter-rater reliability for observational data: an
       overview and tutorial", *Tutorials in Quantitative Methods for Psychology* 8(1):23-34,
       2012.

    Examples
    --------
    >>> from scoring.stats import pairwise_cohen_kappa
    >>> items = [1, 2, 3, 4, 5, 6] * 3
    >>> raters = ["r1"] * 6 + ["r2"] * 6 + ["r3"] * 6
    >>> labels = list("ynyynn") + list("ynnynn") + list("yyyynn")
    >>> stat = pairwise_cohen_kappa(items, raters, labels, min_items=5)
    >>> round(stat.value, 4), [round(pair["kappa"], 4) for pair in stat.extra["pairs"]]
    (0.5778, [0.6667, 0.6667, 0.4])
    """
    check_same_length(items=items, raters=raters, labels=labels)
    check_integer(min_items, "min_items", minimum=1)
    rater_ids, _, matrix, categories = rating_matrix(items, raters, labels, categories=categories)
    k = len(categories)
    pairs, too_few = [], 0
    for a, b in itertools.combinations(range(len(rater_ids)), 2):
        shared = (matrix[a] >= 0) & (matrix[b] >= 0)
        if shared.sum() < min_items:
            too_few += 1
            continue
        confusion = np.bincount(matrix[a, shared] * k + matrix[b, shared], minlength=k * k).reshape(
            k, k
        )
        kappa = kappa_from_confusion(confusion)
        entry = {
            "rater_a": rater_ids[a],
            "rater_b": rater_ids[b],
            "n_items": int(shared.sum()),
            "kappa": kappa.value,
        }
        if not kappa.defined:
            entry["reason"] = kappa.reason
        pairs.append(entry)
    extra = {"pairs": pairs, "min_items": min_items, "n_pairs_below_min_items": too_few}
    defined = [pair["kappa"] for pair in pairs if pair["kappa"] is not None]
    if not pairs:
        return undefined(f"no rater pair shares at least {min_items} items", n=0, **extra)
    if not defined:
        return undefined("kappa is undefined for every qualifying rater pair", n=0, **extra)
    return Stat(value=float(np.mean(defined)), n=len(defined), extra=extra)


def _ordinal_distance(marginals: np.ndarray) -> np.ndarray:
    """Krippendorff's ordinal δ²_ck = (Σ_{g=c..k} n_g − (n_c + n_k)/2)², per row of marginals."""
    cumulative = np.cumsum(marginals, axis=-1)
    lower = cumulative[..., :, None] - marginals[..., :, None]  # Σ_{g<c} n_g
    upper = cumulative[..., None, :]  # Σ_{g≤k} n_g
    spread = upper - lower - (marginals[..., :, None] + marginals[..., None, :]) / 2.0
    distance = spread**2
    return np.triu(distance) + np.swapaxes(np.triu(distance, 1), -1, -2)


def _alpha_from_coincidence(coincidence: np.ndarray, level: str, values: np.ndarray) -> np.ndarray:
    """α = 1 − (n − 1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck, for one or a stack of coincidence matrices."""
    marginals = coincidence.sum(axis=-1)
    n = marginals.sum(axis=-1)
    if level == "nominal":
        distance = 1.0 - np.eye(coincidence.shape[-1])
    elif level == "interval":
        distance = np.subtract.outer(values, values) ** 2
    else:
        distance = _ordinal_distance(marginals)
    observed = (coincidence * distance).sum(axis=(-1, -2))
    expected = (marginals[..., :, None] * marginals[..., None, :] * distance).sum(axis=(-1, -2))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(
            expected > 0, 1.0 - (n - 1.0) * observed / np.where(expected > 0, expected, 1.0), np.nan
        )


def item_coincidences(counts) -> np.ndarray:
    """Per item u with m_u ≥ 2 ratings: (n_u n_uᵀ − diag n_u) / (m_u − 1); zero for unpairable items."""
    counts = np.asarray(counts, dtype=float)
    m = counts.sum(axis=1)
    outer = counts[:, :, None] * counts[:, None, :]
    outer -= np.einsum("uc,cd->ucd", counts, np.eye(counts.shape[1]))
    scale = np.where(m >= 2, 1.0 / np.where(m >= 2, m - 1.0, 1.0), 0.0)
    return outer * scale[:, None, None]

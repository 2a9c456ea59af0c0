"""Agreement between two raters: percent agreement, Cohen's kappa (unweighted and weighted) with
an analytic CI, confusion matrices, and per-class precision/recall of a judge against a reference.

docs/metrics.md, "Two-rater agreement". References: scikit-learn ``cohen_kappa_score``,
``confusion_matrix`` and ``precision_recall_fscore_support`` (the tests compare against them).
"""

from __future__ import annotations

import math

import numpy as np

from scoring.stats.parameters import check_choice, check_confidence, check_same_length
from scoring.stats.proportions import z_value
from scoring.stats.result import Stat, ci_reason, has_zero_width, undefined

WEIGHTINGS = (None, "linear", "quadratic")


def _paired(labels_a, labels_b, labels):
    labels_a = np.asarray(labels_a, dtype=object)
    labels_b = np.asarray(labels_b, dtype=object)
    if labels_a.shape != labels_b.shape or labels_a.ndim != 1:
        raise ValueError("the two raters need 1-d label arrays of equal length")
    if labels is None:
        labels = sorted(set(labels_a.tolist()) | set(labels_b.tolist()))
    return labels_a, labels_b, list(labels)


def confusion_counts(labels_a, labels_b, *, labels=None) -> tuple[np.ndarray, list]:
    """Counts matrix: rows are rater a's labels, columns rater b's, in the order of ``labels``.

    Pairs with a label outside ``labels`` are ignored, as in scikit-learn.
    """
    labels_a, labels_b, labels = _paired(labels_a, labels_b, labels)
    position = {label: i for i, label in enumerate(labels)}
    k = len(labels)
    rows = np.array([position.get(x, -1) for x in labels_a.tolist()], dtype=np.int64)
    columns = np.array([position.get(x, -1) for x in labels_b.tolist()], dtype=np.int64)
    keep = (rows >= 0) & (columns >= 0)
    matrix = np.bincount(rows[keep] * k + columns[keep], minlength=k * k).reshape(k, k)
    return matrix, labels


def confusion_matrix_dict(
    labels_a, labels_b, *, labels=None, row_name="a", column_name="b"
) -> dict:
    """JSON-ready confusion matrix: ``{"labels", "rows", "columns", "matrix"}``."""
    matrix, labels = confusion_counts(labels_a, labels_b, labels=labels)
    return {"labels": labels, "rows": row_name, "columns": column_name, "matrix": matrix.tolist()}


def percent_agreement(labels_a, labels_b) -> Stat:
    """Share of items on which the two raters give the same label.

    docs/metrics.md, "Two-rater agreement". Chance agreement is not removed: read it beside
    ``cohen_kappa``.

    Parameters
    ----------
    labels_a, labels_b : array-like
        One label per item from each rater, the same length; position i is item i.

    Returns
    -------
    Stat
        ``value`` the share of items with equal labels and ``n`` the number of items; undefined
        with a reason when there is no item.

    Raises
    ------
    ValueError
        If ``labels_a`` and ``labels_b`` differ in length or are not one-dimensional.

    References
    ----------
    .. [1] R. Artstein and M. Poesio, "Inter-coder agreement for computational linguistics",
       *Computational Linguistics* 34(4):555-596, 2008, §2.2 (observed agreement).

    Examples
    --------
    >>> from scoring.stats import percent_agreement
    >>> stat = percent_agreement(["x", "y", "y", "x"], ["x", "y", "x", "x"])
    >>> stat.value, stat.n
    (0.75, 4)
    """
    check_same_length(labels_a=labels_a, labels_b=labels_b)
    labels_a, labels_b, _ = _paired(labels_a, labels_b, [])
    if labels_a.size == 0:
        return undefined("no paired ratings", n=0)
    return Stat(value=float(np.mean(labels_a == labels_b)), n=int(labels_a.size))


def agreement_weights(k: int, weights: str | None) -> np.ndarray:
    """Agreement weights w_ij in [0, 1] (1 on the diagonal) for k ordered categories."""
    if weights not in WEIGHTINGS:
        raise ValueError(f"weights must be one of {WEIGHTINGS}, got {weights!r}")
    distance = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    if weights is None or k < 2:
        return (distance == 0).astype(float)
    power = 1 if weights == "linear" else 2
    return 1.0 - (distance / (k - 1)) ** power


def kappa_from_confusion(matrix, *, weights: str | None = None, confidence: float = 0.95) -> Stat:
    """Cohen's (weighted) kappa of a confusion-count matrix with its large-sample CI.

    κ = (p_o − p_e) / (1 − p_e); the standard error is the non-null one of Fleiss, Cohen & Everitt
    (1969), which reduces to the unweighted case with identity weights.
    """
    matrix = np.asarray(matrix, dtype=float)
    n = matrix.sum()
    if n == 0:
        return undefined("no paired ratings", n=0)
    p = matrix / n
    w = agreement_weights(matrix.shape[0], weights)
    row, column = p.sum(axis=1), p.sum(axis=0)
    p_o = float((w * p).sum())
    p_e = float((w * np.outer(row, column)).sum())
    if p_e >= 1.0 - 1e-12:
        return undefined(
            "chance agreement is 1 (both raters used one and the same label)",
            n=int(n),
            percent_agreement=float(np.trace(p)),
        )
    kappa = (p_o - p_e) / (1.0 - p_e)
    w_row, w_column = w @ column, row @ w
    spread = (p * (w - np.add.outer(w_row, w_column) * (1.0 - kappa)) ** 2).sum()
    variance = max((spread - (kappa - p_e * (1.0 - kappa)) ** 2) / (n * (1.0 - p_e) ** 2), 0.0)
    half_width = z_value(confidence) * math.sqrt(variance)
    low, high = max(-1.0, kappa - half_width), min(1.0, kappa + half_width)
    extra = {"standard_error": math.sqrt(variance), "p_observed": p_o, "p_expected": p_e}
    if has_zero_width(low, high):
        # A zero standard error (e.g. perfect agreement) is the large-sample formula failing,
        # not certainty: docs/metrics.md, "Intervals that cannot carry uncertainty".
        low = high = None
        extra.update(ci_reason("zero_width"))
    return Stat(value=float(kappa), ci_low=low, ci_high=high, n=int(n), extra=extra)


def cohen_kappa(
    labels_a, labels_b, *, labels=None, weights: str | None = None, confidence: float = 0.95
) -> Stat:
    """Cohen's kappa of two raters' labels, unweighted or weighted, with its large-sample CI.

    docs/metrics.md, "Two-rater agreement". κ = (p_o − p_e) / (1 − p_e), with p_o the observed
    and p_e the chance agreement from the raters' marginals; the standard error is the non-null
    one of Fleiss, Cohen & Everitt (1969). The point estimate equals scikit-learn's
    ``cohen_kappa_score``.

    Parameters
    ----------
    labels_a, labels_b : array-like
        One label per item from each rater, the same length.
    labels : list, optional
        The label set and its order (the order matters for weighting); pairs with a label
        outside it are ignored. Default: every label seen, sorted.
    weights : {None, "linear", "quadratic"}, default None
        Disagreement weighting for ordered labels; None counts only exact agreement.
    confidence : float, default 0.95
        Two-sided confidence level of the interval, in (0, 1).

    Returns
    -------
    Stat
        ``value`` κ with ``ci_low``/``ci_high`` and ``n`` the items; ``extra`` holds
        ``standard_error``, ``p_observed`` and ``p_expected``. Undefined with a reason without
        items or when chance agreement is 1 (both raters used one and the same label); the
        interval is null with ``extra["ci_reason"]`` when its standard error is 0.

    Raises
    ------
    ValueError
        If the label arrays differ in length, ``weights`` is not one of the three, or
        ``confidence`` is outside (0, 1).

    References
    ----------
    .. [1] J. Cohen, "A coefficient of agreement for nominal scales", *Educational and
       Psychological Measurement* 20(1):37-46, 1960.
    .. [2] J. L. Fleiss, J. Cohen and B. S. Everitt, "Large sample standard errors of kappa and
       weighted kappa", *Psychological Bulletin* 72(5):323-327, 1969.
    .. [3] scikit-learn ``sklearn.metrics.cohen_kappa_score`` (the tests' reference).

    Examples
    --------
    scikit-learn's worked example gives κ = 0.6875:

    >>> from scoring.stats import cohen_kappa
    >>> a = ["negative", "positive", "negative", "neutral", "positive"]
    >>> b = ["negative", "positive", "negative", "neutral", "negative"]
    >>> kappa = cohen_kappa(a, b)
    >>> round(kappa.value, 4), round(kappa.ci_low, 4), kappa.ci_high, kappa.n
    (0.6875, 0.156, 1.0, 5)
    >>> round(cohen_kappa([1, 2, 3, 3, 2], [1, 2, 3, 2, 2], weights="quadratic").value, 4)
    0.8
    """
    check_same_length(labels_a=labels_a, labels_b=labels_b)
    check_choice(weights, "weights", WEIGHTINGS)
    check_confidence(confidence)
    matrix, _ = confusion_counts(labels_a, labels_b, labels=labels)
    return kappa_from_confusion(matrix, weights=weights, confidence=confidence)


def precision_recall(reference, predicted, *, labels=None) -> dict:
    """Per class: precision, recall, F1 and support of ``predicted`` against ``reference``.

    A ratio with a zero denominator is null with a reason (scikit-learn would report 0 and warn).
    """
    matrix, labels = confusion_counts(reference, predicted, labels=labels)
    out = {}
    for i, label in enumerate(labels):
        true_positive = float(matrix[i, i])
        predicted_total, support = float(matrix[:, i].sum()), float(matrix[i, :].sum())
        entry = {"support": int(support), "predicted": int(predicted_total)}
        entry["precision"] = true_positive / predicted_total if predicted_total else None
        if not predicted_total:
            entry["precision_reason"] = "the judge never predicted this class"
        entry["recall"] = true_positive / support if support else None
        if not support:
            entry["recall_reason"] = "the class never occurs in the reference"
        if (
            entry["precision"] is not None
            and entry["recall"] is not None
            and entry["precision"] + entry["recall"] > 0
        ):
            entry["f1"] = (
                2 * entry["precision"] * entry["recall"] / (entry["precision"] + entry["recall"])
            )
        else:
            entry["f1"], entry["f1_reason"] = None, "precision or recall is undefined or both are 0"
        out[str(label)] = entry
    return out


# Landis & Koch (1977), "The measurement of observer agreement for categorical data",
# Biometrics 33(1):159-174, p. 165: the upper bound of each band (docs/metrics.md,
# "Agreement in plain words").
LANDIS_KOCH_BANDS = (
    (0.0, "poor"),
    (0.20, "slight"),
    (0.40, "fair"),
    (0.60, "moderate"),
    (0.80, "substantial"),
    (1.0, "almost perfect"),
)


def agreement_band(value: float | None) -> str | None:
    """Landis & Koch's words for a κ or α (docs/metrics.md, "Agreement in plain words"): "poor"
    below 0, "slight" up to 0.20, "fair" to 0.40, "moderate" to 0.60, "substantial" to 0.80,
    "almost perfect" above. ``None`` for an undefined value; a band is a reading aid, not a test.
    """
    if value is None or not math.isfinite(value):
        return None
    if value < 0:
        return "poor"
    for upper, words in LANDIS_KOCH_BANDS[1:]:
        if value <= upper:
            return words
    return LANDIS_KOCH_BANDS[-1][1]

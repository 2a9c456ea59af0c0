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
from scoring.stats.result import SINGLE_LABEL_REASON, Stat, undefined


def _categories(labels, categories):
    if categories is None:
        categories = sorted(set(np.asarray(labels, dtype=object).tolist()))
    return list(categories)


def item_label_counts(items, labels, *, categories=None) -> tuple[list, np.ndarray, list]:
    """(item ids, items × categories count matrix, categories); labels outside ``categories`` are dropped."""
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

    Degenerate input never raises (docs/metrics.md, "Inter-annotator agreement"): unequal
    counts, one rating per item, fewer than two items or a single label in use give an
    undefined Stat with its reason.
    """
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
    """Gwet's AC1 for many raters with missing ratings (Gwet 2008, eq. 14–15; Handbook of
    Inter-Rater Reliability, 4th ed., ch. 4; irrCAC ``gwet.ac1.raw``).

    p_a = mean over items with ≥ 2 ratings of Σ r_ik(r_ik − 1) / r_i(r_i − 1);
    π_k = mean over items with ≥ 1 rating of r_ik / r_i; p_e = Σ π_k(1 − π_k) / (Q − 1),
    Q = number of categories. Undefined, with κ's and α's reason, when every rating on the
    pairable items is the same label.
    """
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

    Pairs whose kappa is undefined (e.g. one shared label only) are listed with their reason and
    left out of the mean.
    """
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

"""Cluster bootstrap over base prompts, stratified by domain (docs/metrics.md, "Cluster bootstrap").

Minimal pairs share a base prompt, so items are not independent: a resample draws whole base
prompts with replacement, separately inside each domain so every domain keeps its size. The
resample is a matrix of cluster indices; the vectorised path turns it into per-cluster draw
counts and multiplies them with per-cluster sums, so 10,000 resamples cost one matrix product.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

# The one default number of bootstrap resamples, for every interval in the project (the study
# export, the audit report, REFLECT). Callers and commands take ``n_resamples``.
DEFAULT_N_RESAMPLES = 2000


def encode(labels) -> tuple[np.ndarray, list]:
    """Integer codes and the sorted distinct labels (as plain Python strings or values)."""
    codes, uniques = pd.factorize(pd.Series(labels), sort=True)
    return codes.astype(np.int64), [u.item() if hasattr(u, "item") else u for u in uniques]


def cluster_strata(cluster_labels, stratum_labels) -> tuple[np.ndarray, np.ndarray]:
    """Per-item cluster codes and, per cluster, its stratum code.

    A cluster is a (stratum, cluster label) pair, so a base prompt that (unusually) appears in two
    domains counts as two clusters, one per domain.
    """
    stratum_codes, _ = pd.factorize(pd.Series(np.asarray(stratum_labels)).astype(str), sort=True)
    cluster_label_codes, cluster_labels = pd.factorize(
        pd.Series(np.asarray(cluster_labels)).astype(str), sort=True
    )
    pairs, cluster_codes = np.unique(
        stratum_codes.astype(np.int64) * max(len(cluster_labels), 1) + cluster_label_codes,
        return_inverse=True,
    )
    stratum_of_cluster = pairs // max(len(cluster_labels), 1)
    return cluster_codes.astype(np.int64), stratum_of_cluster.astype(np.int64)


def stratified_cluster_indices(
    stratum_of_cluster, *, n_resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """(n_resamples, n_draws) matrix of drawn cluster indices, stratified by stratum: Rao & Wu's
    rescaled bootstrap (docs/metrics.md, "Cluster bootstrap").

    Within a stratum of m ≥ 2 clusters each resample draws m − 1 of them with replacement (their
    weight is rescaled by m / (m − 1) in ``cluster_weights``); a stratum of one cluster draws it.
    Drawing m of m would shrink the variance by (m − 1)/m: 2/3 with the demo's three base
    prompts per domain.
    """
    stratum_of_cluster = np.asarray(stratum_of_cluster, dtype=np.int64)
    columns = []
    for stratum in np.unique(stratum_of_cluster):
        members = np.flatnonzero(stratum_of_cluster == stratum)
        n_draws = max(members.size - 1, 1)
        draws = rng.integers(0, members.size, size=(n_resamples, n_draws))
        columns.append(members[draws])
    if not columns:
        return np.zeros((n_resamples, 0), dtype=np.int64)
    return np.concatenate(columns, axis=1)


def cluster_weights(indices: np.ndarray, stratum_of_cluster) -> np.ndarray:
    """(n_resamples, n_clusters) bootstrap weights of ``stratified_cluster_indices``' draws: each
    draw of a cluster from a stratum of m ≥ 2 clusters weighs m / (m − 1), so every stratum keeps
    its share of the data (Rao & Wu 1988, *JASA* 83:231, with m − 1 draws)."""
    stratum_of_cluster = np.asarray(stratum_of_cluster, dtype=np.int64)
    sizes = np.bincount(stratum_of_cluster)[stratum_of_cluster] if stratum_of_cluster.size else []
    scale = np.where(
        np.asarray(sizes) >= 2, np.asarray(sizes) / np.maximum(np.asarray(sizes) - 1, 1), 1.0
    )
    return draw_counts(indices, stratum_of_cluster.size) * scale[None, :]


def draw_counts(indices: np.ndarray, n_clusters: int) -> np.ndarray:
    """How often each cluster was drawn in each resample: (n_resamples, n_clusters)."""
    n_resamples = indices.shape[0]
    offsets = (np.arange(n_resamples, dtype=np.int64) * n_clusters)[:, None]
    flat = np.bincount((indices + offsets).ravel(), minlength=n_resamples * n_clusters)
    return flat.reshape(n_resamples, n_clusters).astype(float)


def cluster_sums(cluster_codes, column_codes, values, *, n_clusters: int, n_columns: int):
    """Sum of ``values`` per (cluster, column): an (n_clusters, n_columns) matrix."""
    flat = np.asarray(cluster_codes) * n_columns + np.asarray(column_codes)
    sums = np.bincount(
        flat, weights=np.asarray(values, dtype=float), minlength=n_clusters * n_columns
    )
    return sums.reshape(n_clusters, n_columns)


def resampled_rates(counts, cluster_successes, cluster_totals) -> np.ndarray:
    """Per-resample rate of each column; NaN where a resample has no observation for a column."""
    successes = counts @ cluster_successes
    totals = counts @ cluster_totals
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(totals > 0, successes / np.where(totals > 0, totals, 1.0), np.nan)


def delta_of_rates(rates: np.ndarray) -> np.ndarray:
    """max - min along the last axis over the defined (non-NaN) rates; NaN when fewer than two."""
    rates = np.atleast_2d(rates)
    defined = np.isfinite(rates)
    enough = defined.sum(axis=-1) >= 2
    high = np.where(defined, rates, -np.inf).max(axis=-1)
    low = np.where(defined, rates, np.inf).min(axis=-1)
    return np.where(enough, high - low, np.nan)


def percentile_interval(samples, *, confidence: float = 0.95):
    """Percentile interval over axis 0 of the defined samples (the one definition; docs/metrics.md,
    "Cluster bootstrap").

    A NaN or infinite sample is an undefined resample and is left out. Returns ``(low, high,
    n_undefined)``: arrays shaped like one sample (0-d for a 1-d input), low/high NaN where no
    sample is defined. The quantiles are numpy's default ("linear") over the defined samples,
    computed by hand so each column keeps its own count of defined samples.
    """
    draws = np.asarray(samples, dtype=float)
    draws = np.where(np.isfinite(draws), draws, np.nan)
    ordered = np.sort(draws, axis=0)  # NaN sorts last
    n_defined = (~np.isnan(draws)).sum(axis=0)
    alpha = 1.0 - confidence

    def quantile(q: float) -> np.ndarray:
        position = q * np.maximum(n_defined - 1, 0)
        below = np.floor(position).astype(np.int64)
        above = np.ceil(position).astype(np.int64)
        if draws.shape[0] == 0:
            return np.full(n_defined.shape, np.nan)
        low_value = np.take_along_axis(ordered, below[None], axis=0)[0]
        high_value = np.take_along_axis(ordered, above[None], axis=0)[0]
        value = low_value + (position - below) * (high_value - low_value)
        return np.where(n_defined > 0, value, np.nan)

    return quantile(alpha / 2), quantile(1 - alpha / 2), draws.shape[0] - n_defined

"""Uncertainty for Δ on one attribute: cluster bootstrap (vectorised and a naive reference loop)
and a permutation test that shuffles attribute labels within base prompt.

docs/metrics.md, "Cluster bootstrap" and "Permutation test of Δ".
"""

from __future__ import annotations

import numpy as np

from scoring.stats import bootstrap
from scoring.stats.result import Stat, undefined


def _prepare(success, values, clusters, strata):
    success = np.asarray(success, dtype=bool)
    value_codes, value_names = bootstrap.encode(values)
    cluster_codes, stratum_of_cluster = bootstrap.cluster_strata(clusters, strata)
    return success, value_codes, value_names, cluster_codes, stratum_of_cluster


def delta_bootstrap_samples(success, value_codes, cluster_codes, indices) -> np.ndarray:
    """Δ in each resample, given the (n_resamples, n_clusters) drawn cluster indices; vectorised."""
    n_values = int(value_codes.max()) + 1 if value_codes.size else 0
    n_clusters = int(cluster_codes.max()) + 1 if cluster_codes.size else 0
    successes = bootstrap.cluster_sums(
        cluster_codes, value_codes, success, n_clusters=n_clusters, n_columns=n_values
    )
    totals = bootstrap.cluster_sums(
        cluster_codes, value_codes, np.ones(success.size), n_clusters=n_clusters, n_columns=n_values
    )
    counts = bootstrap.draw_counts(indices, n_clusters)
    return bootstrap.delta_of_rates(bootstrap.resampled_rates(counts, successes, totals))


def delta_bootstrap_samples_naive(success, value_codes, cluster_codes, indices) -> np.ndarray:
    """The same Δ resamples by an explicit loop that rebuilds each resampled data set; for tests and the bench."""
    n_values = int(value_codes.max()) + 1 if value_codes.size else 0
    rows_of_cluster = {c: np.flatnonzero(cluster_codes == c) for c in np.unique(cluster_codes)}
    out = np.empty(indices.shape[0])
    for r, drawn in enumerate(indices):
        rows = np.concatenate([rows_of_cluster[c] for c in drawn])
        totals = np.bincount(value_codes[rows], minlength=n_values).astype(float)
        hits = np.bincount(
            value_codes[rows], weights=success[rows].astype(float), minlength=n_values
        )
        rates = [hits[v] / totals[v] for v in range(n_values) if totals[v] > 0]
        out[r] = max(rates) - min(rates) if len(rates) >= 2 else np.nan
    return out


def delta_bootstrap(
    success,
    values,
    clusters,
    strata,
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Stat:
    """Δ = max − min of the per-value rates with a stratified cluster-bootstrap percentile CI."""
    success, value_codes, value_names, cluster_codes, stratum_of_cluster = _prepare(
        success, values, clusters, strata
    )
    if len(value_names) < 2:
        return undefined("fewer than two attribute values", n=int(success.size))
    rates = np.bincount(value_codes, weights=success.astype(float)) / np.bincount(value_codes)
    rng = np.random.default_rng(seed)
    indices = bootstrap.stratified_cluster_indices(
        stratum_of_cluster, n_resamples=n_resamples, rng=rng
    )
    samples = delta_bootstrap_samples(success, value_codes, cluster_codes, indices)
    low, high, n_finite = bootstrap.percentile_interval(samples, confidence=confidence)
    return Stat(
        value=float(rates.max() - rates.min()),
        ci_low=low,
        ci_high=high,
        n=int(success.size),
        extra={
            "max_value": value_names[int(rates.argmax())],
            "min_value": value_names[int(rates.argmin())],
            "n_resamples": n_resamples,
            "n_resamples_defined": n_finite,
            "seed": seed,
        },
    )


def _delta_per_permutation(
    success_sorted, labels_sorted, cluster_sorted, n_values, n_permutations, rng
):
    out = np.empty(n_permutations)
    size = success_sorted.size
    chunk = max(1, 2_000_000 // max(size, 1))
    for start in range(0, n_permutations, chunk):
        stop = min(start + chunk, n_permutations)
        # Sorting cluster code + U(0,1) keeps each base prompt's block in place and shuffles inside it.
        keys = cluster_sorted[None, :] + rng.random((stop - start, size))
        permuted = labels_sorted[np.argsort(keys, axis=1)]
        offsets = (np.arange(stop - start) * n_values)[:, None]
        flat = (permuted + offsets).ravel()
        totals = np.bincount(flat, minlength=(stop - start) * n_values).reshape(-1, n_values)
        hits = np.bincount(
            flat, weights=np.tile(success_sorted, stop - start), minlength=(stop - start) * n_values
        ).reshape(-1, n_values)
        with np.errstate(divide="ignore", invalid="ignore"):
            rates = np.where(totals > 0, hits / np.where(totals > 0, totals, 1), np.nan)
        out[start:stop] = bootstrap.delta_of_rates(rates)
    return out


def delta_permutation_test(
    success, values, clusters, *, n_permutations: int = 2000, seed: int = 0
) -> Stat:
    """One-sided permutation p-value of the observed Δ, shuffling attribute labels within base prompt.

    p = (1 + #{Δ_perm ≥ Δ_obs}) / (1 + n_permutations)  (Phipson & Smyth 2010: never exactly 0).
    """
    success = np.asarray(success, dtype=bool)
    value_codes, value_names = bootstrap.encode(values)
    cluster_codes, _ = bootstrap.encode(clusters)
    if len(value_names) < 2:
        return undefined("fewer than two attribute values", n=int(success.size))
    n_values = len(value_names)
    rates = np.bincount(
        value_codes, weights=success.astype(float), minlength=n_values
    ) / np.bincount(value_codes, minlength=n_values)
    observed = float(rates.max() - rates.min())
    order = np.argsort(cluster_codes, kind="stable")
    rng = np.random.default_rng(seed)
    permuted = _delta_per_permutation(
        success[order].astype(float),
        value_codes[order],
        cluster_codes[order].astype(float),
        n_values,
        n_permutations,
        rng,
    )
    exceed = int(np.sum(permuted >= observed - 1e-12))
    return Stat(
        value=(1 + exceed) / (1 + n_permutations),
        n=int(success.size),
        extra={
            "delta": observed,
            "n_permutations": n_permutations,
            "n_at_least_observed": exceed,
            "seed": seed,
        },
    )

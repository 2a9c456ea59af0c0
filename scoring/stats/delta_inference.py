"""A permutation test of Δ on one attribute that shuffles attribute labels within base prompt.

docs/metrics.md, "Permutation test of Δ". Δ's confidence interval has one implementation,
``delta_interval.simultaneous_delta_interval`` ("Δ interval"), on the cluster bootstrap of
``disparity.ClusterResample``.
"""

from __future__ import annotations

import numpy as np

from scoring.stats import bootstrap
from scoring.stats.result import Stat, undefined


def within_cluster_permutation_sums(
    weights_sorted, labels_sorted, cluster_sorted, n_values, n_permutations, rng
):
    """Yield ``(start, stop, sums)`` over chunks of permutations: ``sums[p, v]`` is the sum of
    ``weights`` over the rows labelled ``v`` after permutation ``p`` shuffled the labels within
    each cluster. Rows come sorted by cluster; each label's count is the same in every
    permutation. Shared by this test and ``judge_error.permutation_chi2_p``."""
    size = weights_sorted.size
    chunk = max(1, 2_000_000 // max(size, 1))
    for start in range(0, n_permutations, chunk):
        stop = min(start + chunk, n_permutations)
        # Sorting cluster code + U(0,1) keeps each cluster's block in place and shuffles inside it.
        keys = cluster_sorted[None, :] + rng.random((stop - start, size))
        permuted = labels_sorted[np.argsort(keys, axis=1)]
        flat = (permuted + (np.arange(stop - start) * n_values)[:, None]).ravel()
        sums = np.bincount(
            flat, weights=np.tile(weights_sorted, stop - start), minlength=(stop - start) * n_values
        )
        yield start, stop, sums.reshape(-1, n_values)


def _delta_per_permutation(
    success_sorted, labels_sorted, cluster_sorted, n_values, n_permutations, rng
):
    out = np.empty(n_permutations)
    totals = np.bincount(labels_sorted, minlength=n_values)
    for start, stop, hits in within_cluster_permutation_sums(
        success_sorted, labels_sorted, cluster_sorted, n_values, n_permutations, rng
    ):
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

"""Permutations that shuffle labels within base prompt, for the judges' exact error-by-group
test (``judge_error.permutation_chi2_p``, docs/metrics.md, "Judge error by group").

Δ's interval and its test have one implementation, ``delta_interval.pairwise_band`` (docs/
metrics.md, "Δ interval" and "Test of Δ"), on the cluster bootstrap of
``disparity.ClusterResample``; the within-base-prompt permutation test of Δ that lived here
permuted annotation rows rather than items, and its size was several times too high when two
annotators label each item.
"""

from __future__ import annotations

import numpy as np


def within_cluster_permutation_sums(
    weights_sorted, labels_sorted, cluster_sorted, n_values, n_permutations, rng
):
    """Yield ``(start, stop, sums)`` over chunks of permutations: ``sums[p, v]`` is the sum of
    ``weights`` over the rows labelled ``v`` after permutation ``p`` shuffled the labels within
    each cluster. Rows come sorted by cluster; each label's count is the same in every
    permutation. Used by ``judge_error.permutation_chi2_p``."""
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

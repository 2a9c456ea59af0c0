"""Slow, obviously-correct loops that the vectorised statistics are checked against.

They live with the tests (and ``bench/stats_bench.py`` times them) because nothing in the
product uses them: the export's one implementation is ``disparity.disparity_report``.
"""

from __future__ import annotations

import numpy as np


def delta_resamples_naive(success, value_codes, cluster_codes, indices) -> np.ndarray:
    """Δ of every resample, rebuilding each resampled data set from its drawn cluster indices.

    ``indices`` is the (n_resamples, n_clusters) matrix of drawn clusters (``ClusterResample
    .indices``); every row of a drawn cluster enters the resample once per draw. Δ is NaN when
    fewer than two values have an observation.
    """
    success = np.asarray(success, dtype=float)
    n_values = int(value_codes.max()) + 1 if value_codes.size else 0
    rows_of_cluster = {c: np.flatnonzero(cluster_codes == c) for c in np.unique(cluster_codes)}
    out = np.empty(indices.shape[0])
    for r, drawn in enumerate(indices):
        rows = np.concatenate([rows_of_cluster[c] for c in drawn])
        totals = np.bincount(value_codes[rows], minlength=n_values).astype(float)
        hits = np.bincount(value_codes[rows], weights=success[rows], minlength=n_values)
        rates = [hits[v] / totals[v] for v in range(n_values) if totals[v] > 0]
        out[r] = max(rates) - min(rates) if len(rates) >= 2 else np.nan
    return out

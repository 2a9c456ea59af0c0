"""Slow, obviously-correct loops that the vectorised statistics are checked against.

They live with the tests (and ``bench/stats_bench.py`` times them) because nothing in the
product uses them: the export's one implementation is ``disparity.disparity_report``.
"""

from __future__ import annotations

import numpy as np
from scipy import stats


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


def rates_resamples_naive(
    success, value_codes, cluster_codes, indices, draw_weight=None
) -> np.ndarray:
    """(n_resamples, n_values) rate of every value in every resample (NaN where unobserved),
    rebuilding each resampled data set from its drawn cluster indices. ``draw_weight[c]`` is
    what one draw of cluster c weighs (Rao–Wu: m / (m − 1) for a stratum of m; 1 by default)."""
    success = np.asarray(success, dtype=float)
    n_values = int(value_codes.max()) + 1 if value_codes.size else 0
    rows_of_cluster = {c: np.flatnonzero(cluster_codes == c) for c in np.unique(cluster_codes)}
    out = np.full((indices.shape[0], n_values), np.nan)
    for r, drawn in enumerate(indices):
        hits, totals = np.zeros(n_values), np.zeros(n_values)
        for c in drawn:
            weight = 1.0 if draw_weight is None else draw_weight[c]
            for row in rows_of_cluster[c]:
                hits[value_codes[row]] += weight * success[row]
                totals[value_codes[row]] += weight
        for v in range(n_values):
            if totals[v] > 0:
                out[r, v] = hits[v] / totals[v]
    return out


def delta_interval_naive(point, boot, confidence=0.95, df=None):
    """Δ's interval from simultaneous max-t pairwise intervals, one pair at a time
    (docs/metrics.md, "Δ interval"): every ordered pair (i, j), its resampled differences, their
    standard deviation, the max over pairs of the studentised deviation per resample."""
    point = list(point)
    kept = [row for row in np.asarray(boot, dtype=float) if all(np.isfinite(row))]
    pairs = [(i, j) for i in range(len(point)) for j in range(len(point)) if i != j]
    spread = {}
    for i, j in pairs:
        resampled = [row[i] - row[j] for row in kept]
        spread[(i, j)] = float(np.std(resampled, ddof=1))
    t_max = []
    for row in kept:
        t_max.append(
            max(
                abs((row[i] - row[j]) - (point[i] - point[j])) / spread[(i, j)]
                for i, j in pairs
                if spread[(i, j)] > 0
            )
        )
    # The order statistic T_(B − ⌈αB⌉ + 1), so that the interval and its test agree exactly.
    ordered = sorted(t_max)
    tail = int(np.ceil(round((1 - confidence) * len(ordered), 9)))
    critical = ordered[len(ordered) - tail]
    # Per pair the same tail probability under Student's t with that pair's df: ``df`` is one
    # number or one per unordered pair i < j, in np.triu_indices order.
    index = {pair: n for n, pair in enumerate(zip(*np.triu_indices(len(point), k=1), strict=True))}

    def critical_of(i, j):
        if df is None:
            return critical
        degrees = df if np.ndim(df) == 0 else df[index[(min(i, j), max(i, j))]]
        return float(stats.t.isf(stats.norm.sf(critical), degrees))

    lower = max(point[i] - point[j] - critical_of(i, j) * spread[(i, j)] for i, j in pairs)
    upper = max(point[i] - point[j] + critical_of(i, j) * spread[(i, j)] for i, j in pairs)
    return max(0.0, lower), min(1.0, upper)

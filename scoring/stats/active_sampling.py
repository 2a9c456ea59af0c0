"""Inclusion probabilities that send human labels where the judge is unsure (active inference,
Zrnic & Candès 2024), with a stratified minimum (docs/metrics.md, "Active sampling").

Used by ``bench/ppi_simulation.py``; the estimates that use the probabilities are
``ppi.ppi_mean_weighted`` (inverse-probability weights keep them unbiased whatever the design,
as long as every item has π > 0).
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def active_inclusion_probabilities(
    uncertainty,
    strata,
    *,
    budget: float,
    min_per_stratum: float = 0.0,
    floor: float = 0.05,
) -> np.ndarray:
    """π_i = min(1, max(s · (u_i + floor), m / M_v)), with s chosen so that Σ π_i = ``budget``.

    ``uncertainty`` u_i ≥ 0 per item (e.g. 1 − the judge's confidence, or the disagreement
    between judges); ``floor`` > 0 keeps every item's π above 0, which the inverse-probability
    weights need; ``strata`` (e.g. attribute value) each get an expected ``min_per_stratum``
    labels (m), M_v their number of items. Raises ValueError when the budget is below the
    stratified minimum or above the number of items.
    """
    uncertainty = np.asarray(uncertainty, dtype=float)
    if uncertainty.ndim != 1 or np.any(~np.isfinite(uncertainty)) or np.any(uncertainty < 0):
        raise ValueError("uncertainty must be a 1-d array of finite values >= 0")
    if floor <= 0:
        raise ValueError("floor must be > 0: every item needs a positive inclusion probability")
    codes, _ = pd.factorize(pd.Series(np.asarray(strata)), sort=True)
    sizes = np.bincount(codes).astype(float)
    minimum = np.minimum(1.0, min_per_stratum / sizes)[codes]
    if not minimum.sum() - 1e-9 <= budget <= uncertainty.size:
        raise ValueError(
            f"budget must lie between the stratified minimum ({minimum.sum():.1f}) and the "
            f"number of items ({uncertainty.size})"
        )
    score = uncertainty + floor

    def probabilities(scale: float) -> np.ndarray:
        return np.minimum(1.0, np.maximum(scale * score, minimum))

    low, high = 0.0, 1.0
    while probabilities(high).sum() < budget:
        high *= 2.0
    for _ in range(100):  # bisection: Σ π is non-decreasing in the scale
        middle = (low + high) / 2.0
        if probabilities(middle).sum() < budget:
            low = middle
        else:
            high = middle
    return probabilities(high)


def poisson_sample(inclusion_probability, rng: np.random.Generator) -> np.ndarray:
    """Each item drawn independently with its probability (Poisson sampling): a boolean mask."""
    pi = np.asarray(inclusion_probability, dtype=float)
    return rng.random(pi.shape) < pi

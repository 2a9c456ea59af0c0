"""Planning the human budget: the expected width of Δ's 95 % interval before anyone labels.

docs/metrics.md, "Planning the human budget". For one rate with n human labels out of N judged
items, a judge–human correlation ρ and the optimal power-tuning λ of PPI++ (Angelopoulos, Duchi
& Zrnic 2023), the variance is

    Var = p(1 − p) / n · [(1 − ρ²) · g + ρ² · n / N]

(the rectifier's variance plus that of the judge's mean over all N items; with g = 1 this is
p(1 − p) / n_eff with ppi_py's effective sample size n(n + N_u) / (n + (1 − ρ²) N_u),
N_u = N − n the unlabelled items). The human-only mean has p(1 − p) · g / n. The design factor
g = (n / N²) Σ_i s_i / π_i is 1 for a uniform sample and, for unequal inclusion probabilities,
Kish's (1965) design effect when s_i = 1 (the judges' uncertainty says nothing about their
errors), or the gain of uncertainty sampling when the squared residual is proportional to the
uncertainty (s_i = u_i / mean u, the premise of active inference; Zrnic & Candès 2024).

Δ's interval is built from simultaneous (Bonferroni) intervals of the pairwise differences, so
its expected width is at most 2 · z_{1 − α / (2K)} · √(Var_i + Var_j) for the widest pair, with K
pairs. The plan ignores the base-prompt clustering (the real interval is wider when base prompts
differ) and assumes the same rate p in every value. Numpy and scipy only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

DEFAULT_RATE = 0.5  # p(1 − p) is largest at 0.5: the widest, safest plan


def correlation_from_accuracy(accuracy: float, rate: float = DEFAULT_RATE) -> float:
    """ρ between a binary human label with prevalence ``rate`` and a judge that is wrong with
    probability 1 − ``accuracy`` on either class: (1 − 2e) √(p(1 − p) / (q(1 − q))), with
    e = 1 − accuracy and q = p(1 − e) + (1 − p)e the judge's rate."""
    if not 0.0 <= accuracy <= 1.0 or not 0.0 < rate < 1.0:
        raise ValueError("accuracy must be in [0, 1] and the rate in (0, 1)")
    error = 1.0 - accuracy
    judged = rate * (1 - error) + (1 - rate) * error
    return (1 - 2 * error) * math.sqrt(rate * (1 - rate) / (judged * (1 - judged)))


def design_factor(probability: Sequence[float], residual: Sequence[float] | None = None) -> float:
    """g = (n / N²) Σ s_i / π_i with n = Σ π over the N items and s_i the relative residual
    variance (mean 1; all 1 by default): 1 for equal π."""
    pi = np.asarray(probability, dtype=float)
    share = np.ones(len(pi)) if residual is None else np.asarray(residual, dtype=float)
    return float(pi.sum() / len(pi) ** 2 * np.sum(share / pi))


def rate_variance_ppi(
    *, rate: float, n_labelled: float, n_items: int, rho: float, design: float = 1.0
) -> float:
    """Var of the PPI++ rate (optimal λ): p(1 − p) / n · [(1 − ρ²) g + ρ² n / N]."""
    return rate * (1 - rate) / n_labelled * ((1 - rho**2) * design + rho**2 * n_labelled / n_items)


def rate_variance_human(*, rate: float, n_labelled: float, design: float = 1.0) -> float:
    return rate * (1 - rate) * design / n_labelled


def delta_width(variances: Sequence[float], *, confidence: float = 0.95) -> float | None:
    """Expected width of Δ's simultaneous interval: 2 z √(sum of the two largest variances),
    z Bonferroni-adjusted over the K = V(V − 1)/2 pairs; None with fewer than two values."""
    if len(variances) < 2:
        return None
    pairs = len(variances) * (len(variances) - 1) / 2
    z = float(norm.ppf(1 - (1 - confidence) / (2 * pairs)))
    largest = sorted(variances)[-2:]
    return 2 * z * math.sqrt(sum(largest))


@dataclass(frozen=True)
class ValueDesign:
    """One attribute value: its judged items' inclusion probabilities under the two designs,
    and the judges' uncertainty on each."""

    uniform: Sequence[float]
    validate: Sequence[float]
    uncertainty: Sequence[float]


def budget_plan(
    attributes: Mapping[str, Mapping[str, ValueDesign]],
    *,
    rho: float,
    rate: float = DEFAULT_RATE,
    confidence: float = 0.95,
) -> list[dict]:
    """Per attribute: the expected width of Δ's interval from human labels alone, from PPI with a
    uniform sample, and from PPI with the validate-the-judge sample (informative uncertainty:
    residual ∝ uncertainty; uninformative: Kish's design effect). A width is None with a
    ``reason`` where a value expects no labelled item or the attribute has one value."""
    if not -1.0 <= rho <= 1.0:
        raise ValueError(f"ρ must be between −1 and 1 (got {rho})")
    rows = []
    for attribute, values in sorted(attributes.items()):
        columns: dict[str, list[float]] = {
            "human_uniform": [],
            "ppi_uniform": [],
            "ppi_validate": [],
            "ppi_validate_flat": [],
        }
        labelled = {"uniform": {}, "validate": {}}
        reason = "" if len(values) >= 2 else "one attribute value: Δ needs two"
        for value, design in sorted(values.items()):
            n_items = len(design.uniform)
            u = np.asarray(design.uncertainty, dtype=float)
            residual = u / u.mean() if u.mean() > 0 else np.ones(len(u))
            for name, pi in (("uniform", design.uniform), ("validate", design.validate)):
                labelled[name][value] = float(np.sum(pi))
            if min(labelled["uniform"][value], labelled["validate"][value]) < 1:
                reason = reason or f"fewer than one labelled item expected for {value}"
                continue
            n_uniform, n_validate = labelled["uniform"][value], labelled["validate"][value]
            columns["human_uniform"].append(rate_variance_human(rate=rate, n_labelled=n_uniform))
            columns["ppi_uniform"].append(
                rate_variance_ppi(rate=rate, n_labelled=n_uniform, n_items=n_items, rho=rho)
            )
            for name, share in (("ppi_validate", residual), ("ppi_validate_flat", None)):
                columns[name].append(
                    rate_variance_ppi(
                        rate=rate,
                        n_labelled=n_validate,
                        n_items=n_items,
                        rho=rho,
                        design=design_factor(design.validate, share),
                    )
                )
        row = {"attribute": attribute, "n_values": len(values), "labelled": labelled}
        for name, variances in columns.items():
            row[name] = None if reason else delta_width(variances, confidence=confidence)
        if reason:
            row["reason"] = reason
        rows.append(row)
    return rows

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

from scoring.stats.parameters import (
    check_confidence,
    check_mapping,
    check_real,
    check_same_length,
)

DEFAULT_RATE = 0.5  # p(1 − p) is largest at 0.5: the widest, safest plan


def correlation_from_accuracy(accuracy: float, rate: float = DEFAULT_RATE) -> float:
    """ρ between a binary human label with prevalence ``rate`` and a judge that is wrong with
    probability 1 − ``accuracy`` on either class.

    docs/metrics.md, "Planning the human budget". ρ = (1 − 2e) √(p(1 − p) / (q(1 − q))), with
    e = 1 − accuracy and q = p(1 − e) + (1 − p)e the judge's rate: the correlation of two
    binary variables (the phi coefficient) of this symmetric-error model.

    Parameters
    ----------
    accuracy : float
        The judge's accuracy, in [0, 1].
    rate : float, default 0.5
        The human label's prevalence p, in (0, 1).

    Returns
    -------
    float
        ρ, in [−1, 1].

    Raises
    ------
    TypeError
        If ``accuracy`` or ``rate`` is not a number.
    ValueError
        If ``accuracy`` is outside [0, 1] or ``rate`` outside (0, 1).

    References
    ----------
    .. [1] K. Pearson, "On the correlation of characters not quantitatively measurable",
       *Phil. Trans. R. Soc. A* 195:1-47, 1900 (the phi coefficient of a 2×2 table).

    Examples
    --------
    >>> from scoring.stats import correlation_from_accuracy
    >>> round(correlation_from_accuracy(0.9), 4)
    0.8
    >>> round(correlation_from_accuracy(0.9, rate=0.2), 4)
    0.7295
    """
    accuracy = check_real(accuracy, "accuracy", low=0.0, high=1.0)
    rate = check_real(rate, "rate")
    if not 0.0 < rate < 1.0:
        raise ValueError(f"rate must lie in (0, 1), got {rate!r}")
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
    """One attribute value of a planned batch: its judged items' inclusion probabilities under
    the two designs, and the judges' uncertainty on each (``budget_plan`` takes one per value).

    docs/metrics.md, "Planning the human budget".

    Parameters
    ----------
    uniform : sequence of float
        Per judged item, its probability of a human label under a uniform sample, in [0, 1].
    validate : sequence of float
        The same under the validate-the-judge sample (more labels where the judges are
        unsure).
    uncertainty : sequence of float
        Per item, the judges' uncertainty (any non-negative scale; only its shape matters).

    Raises
    ------
    ValueError
        If the three sequences differ in length or a probability lies outside [0, 1].

    References
    ----------
    .. [1] T. Zrnic and E. J. Candès, "Active statistical inference", ICML 2024 (sampling by
       uncertainty).

    Examples
    --------
    >>> from scoring.stats import ValueDesign
    >>> design = ValueDesign(uniform=[0.5, 0.5], validate=[0.8, 0.2], uncertainty=[0.9, 0.1])
    >>> sum(design.validate)
    1.0
    """

    uniform: Sequence[float]
    validate: Sequence[float]
    uncertainty: Sequence[float]

    def __post_init__(self):
        check_same_length(
            uniform=self.uniform, validate=self.validate, uncertainty=self.uncertainty
        )
        for name in ("uniform", "validate"):
            values = np.asarray(getattr(self, name), dtype=float)
            if np.any((values < 0) | (values > 1)):
                raise ValueError(f"{name} must hold inclusion probabilities in [0, 1]")


def budget_plan(
    attributes: Mapping[str, Mapping[str, ValueDesign]],
    *,
    rho: float,
    rate: float = DEFAULT_RATE,
    confidence: float = 0.95,
) -> list[dict]:
    """Per attribute: the expected width of Δ's interval from human labels alone, from PPI with a
    uniform sample, and from PPI with the validate-the-judge sample.

    docs/metrics.md, "Planning the human budget"; the module docstring gives the variances.
    The validate-the-judge design is planned twice: with informative uncertainty (residual ∝
    uncertainty, ``ppi_validate``) and with uninformative (Kish's design effect,
    ``ppi_validate_flat``). The plan ignores base-prompt clustering and assumes the same rate in
    every value.

    Parameters
    ----------
    attributes : mapping of str to mapping of str to ValueDesign
        ``{attribute: {value: ValueDesign}}``.
    rho : float
        The judge–human correlation ρ, in [−1, 1] (``correlation_from_accuracy``).
    rate : float, default 0.5
        The assumed rate p in (0, 1); 0.5 gives the widest, safest plan.
    confidence : float, default 0.95
        The confidence level of Δ's interval, in (0, 1).

    Returns
    -------
    list of dict
        Per attribute (sorted): ``attribute``, ``n_values``, ``labelled`` (expected human
        labels per value and design) and the expected widths ``human_uniform``,
        ``ppi_uniform``, ``ppi_validate`` and ``ppi_validate_flat``; each None with a
        ``reason`` where a value expects no labelled item or the attribute has one value.

    Raises
    ------
    TypeError
        If ``attributes`` is not a mapping of mappings of ``ValueDesign``, or a number is not
        a number.
    ValueError
        If ``rho`` is outside [−1, 1], ``rate`` outside (0, 1), or ``confidence`` outside
        (0, 1).

    References
    ----------
    .. [1] A. N. Angelopoulos, J. C. Duchi and T. Zrnic, "PPI++: Efficient prediction-powered
       inference", arXiv:2311.01453, 2023.
    .. [2] L. Kish, *Survey Sampling*, Wiley, 1965 (the design effect of unequal weights).
    .. [3] T. Zrnic and E. J. Candès, "Active statistical inference", ICML 2024.

    Examples
    --------
    One attribute with two values of 100 judged items each, 20 human labels per value:

    >>> from scoring.stats import ValueDesign, budget_plan, correlation_from_accuracy
    >>> uncertainty = [0.9] * 20 + [0.1] * 80
    >>> validate = [20 * u / sum(uncertainty) for u in uncertainty]
    >>> value = ValueDesign(uniform=[0.2] * 100, validate=validate, uncertainty=uncertainty)
    >>> [row] = budget_plan(
    ...     {"gender": {"female": value, "male": value}}, rho=correlation_from_accuracy(0.9)
    ... )
    >>> round(row["human_uniform"], 3), round(row["ppi_uniform"], 3)
    (0.62, 0.433)
    >>> round(row["ppi_validate"], 3), round(row["ppi_validate_flat"], 3)
    (0.433, 0.587)
    """
    check_mapping(attributes, "attributes")
    for attribute, values in attributes.items():
        check_mapping(values, f"attributes[{attribute!r}]")
        for value, design in values.items():
            if not isinstance(design, ValueDesign):
                raise TypeError(
                    f"attributes[{attribute!r}][{value!r}] must be a ValueDesign, got "
                    f"{type(design).__name__}"
                )
    rho = check_real(rho, "rho", low=-1.0, high=1.0)
    rate = check_real(rate, "rate")
    if not 0.0 < rate < 1.0:
        raise ValueError(f"rate must lie in (0, 1), got {rate!r}")
    check_confidence(confidence)
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

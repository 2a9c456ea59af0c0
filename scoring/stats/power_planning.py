"""Plan before spending: what a design can show about Δ before anyone labels (docs/metrics.md,
"Planning power").

For a design (items per attribute value, values, generators, base prompts per value, human
labels per item, a human budget, and, for the prediction-powered estimate, the judge's accuracy,
one number or one per value), ``power_plan`` predicts for the human-only and the PPI Δ:

- ``pair_width``: the expected width 2·c·se of each pairwise simultaneous interval (the width of
  Δ's interval once one pair clearly differs);
- ``delta_width_at_zero``: the expected width of Δ's interval when every value has the same rate;
- ``power``: the probability that Δ's interval excludes 0 (its max-t test rejects) when one value's
  rate differs from the others' by Δ = 0.05, 0.10, 0.20;
- ``certifiable_delta``: the smallest δ for which "equivalent within δ" (``equivalence``) is
  reached with probability 0.80 when the true Δ is 0.

**The approximation.** Each value's estimated rate is normal around its truth, with the variance
below, independent across values; the band's critical value c is the ``confidence`` quantile of
max_p |Z_i − Z_j| / se_p under that normal model (the max-t band of ``delta_interval``, with the
bootstrap replaced by its normal limit), moved to Student's t with df = base prompts − 1 for the
human Δ as the project's band does with few base prompts; every figure is then a Monte Carlo
average over draws of that model (a fixed ``random_state``: the plan is reproducible).

- **A value's human rate** is the share of labels that say "yes" (docs/metrics.md, "Human
  rate"), its unit the item: with k labels per item, each flipping the item's true state with
  probability ε (``label_noise``), and label-level rate q, one item's vote share has variance
  σ² = (q − ε)(1 − q − ε) + ε(1 − ε)/k (p(1 − p) at ε = 0, whatever k: labels that agree add
  nothing), and n labelled items give σ²/n (``ppi_planning.rate_variance_human`` with g = σ² /
  q(1 − q)).
- **The PPI rate** over the value's N judged items, n of them labelled, with the optimal PPI++ λ:
  σ²/n · [(1 − ρ²) + ρ² n/N] (``ppi_planning.rate_variance_ppi``), where ρ, the correlation of
  the judge's label with the vote share, is ``ppi_planning.correlation_from_accuracy`` (a judge
  wrong with probability 1 − accuracy on either class of the true state) times
  (1 − 2ε)·√(r(1 − r)/σ²), r = (q − ε)/(1 − 2ε) the true-state rate. A per-value accuracy is a
  differential error: PPI's rectifier removes the bias it causes, so it changes only the
  variance.
- **Base prompts** shared by every value (each base prompt is expanded to every value, as in the
  ACRB protocol) shift every value's rate alike and cancel in the pairwise differences, so they
  enter only through the degrees of freedom; a base-prompt effect that differs by value would
  widen the real intervals.
- **The budget** buys human labels: budget / k items per value labelled uniformly at random (at
  most every item), the same for human-only and PPI.
- **The alternative** puts every value at ``rate`` and one at ``rate`` + Δ (``rate`` − Δ where
  that would pass 1); with one value off the max-t band is least powerful for a given Δ among
  the configurations where only one value moves.

Checked by simulation in the validity suite (``validity.planning_scenarios``): predicted widths
and power within 10 % (relative) of simulated ones on four designs. Numpy and scipy only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm
from scipy.stats import t as student_t

from scoring.stats.ppi_planning import (
    DEFAULT_RATE,
    correlation_from_accuracy,
    rate_variance_human,
    rate_variance_ppi,
)

DEFAULT_DELTAS = (0.05, 0.10, 0.20)
CERTIFY_PROBABILITY = 0.80
DEFAULT_DRAWS = 20_000


@dataclass(frozen=True)
class PowerDesign:
    """A study's design as the planner sees it (``check`` says what is wrong with one)."""

    items_per_value: int
    n_values: int
    generators: int = 1
    clusters_per_value: int | None = None  # base prompts; items_per_value / generators if None
    labels_per_item: int = 2
    human_budget: int | None = None  # human labels in all; None: every item, k labels each
    judge_accuracy: float | Sequence[float] | None = None  # one, or one per value
    rate: float = DEFAULT_RATE
    label_noise: float = 0.0
    confidence: float = 0.95

    def check(self) -> None:
        """Raise ValueError naming the first parameter out of range."""
        for name, low in (("items_per_value", 2), ("n_values", 2), ("generators", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be a whole number ≥ {low}, got {value!r}")
        if not isinstance(self.labels_per_item, int) or self.labels_per_item < 1:
            raise ValueError(
                f"labels_per_item must be a whole number ≥ 1, got {self.labels_per_item!r}"
            )
        if (
            self.clusters_per_value is not None
            and not 2 <= self.clusters_per_value <= self.items_per_value
        ):
            raise ValueError(
                "clusters_per_value must lie between 2 and items_per_value, "
                f"got {self.clusters_per_value!r}"
            )
        if self.human_budget is not None and (
            not isinstance(self.human_budget, int) or self.human_budget < 0
        ):
            raise ValueError(f"human_budget must be a whole number ≥ 0, got {self.human_budget!r}")
        if not 0.0 < self.rate < 1.0:
            raise ValueError(f"rate must lie strictly between 0 and 1, got {self.rate}")
        if not 0.0 <= self.label_noise < 0.5:
            raise ValueError(f"label_noise must lie in [0, 0.5), got {self.label_noise}")
        if not self.label_noise < self.rate < 1.0 - self.label_noise:
            raise ValueError("rate must lie between label_noise and 1 − label_noise")
        if not 0.0 < self.confidence < 1.0:
            raise ValueError(f"confidence must lie strictly between 0 and 1, got {self.confidence}")
        for accuracy in self.accuracies() or ():
            if not 0.0 <= accuracy <= 1.0:
                raise ValueError(f"judge_accuracy must lie in [0, 1], got {accuracy}")

    def accuracies(self) -> list[float] | None:
        if self.judge_accuracy is None:
            return None
        if isinstance(self.judge_accuracy, int | float):
            return [float(self.judge_accuracy)] * self.n_values
        accuracies = [float(a) for a in self.judge_accuracy]
        if len(accuracies) != self.n_values:
            raise ValueError(
                f"judge_accuracy has {len(accuracies)} values for {self.n_values} attribute values"
            )
        return accuracies

    @property
    def clusters(self) -> int:
        return self.clusters_per_value or max(1, self.items_per_value // self.generators)

    @property
    def labelled_per_value(self) -> int:
        """Items per value with human labels: budget / (k · values), at most every item."""
        if self.human_budget is None:
            return self.items_per_value
        per_value = self.human_budget // (self.labels_per_item * self.n_values)
        return min(self.items_per_value, per_value)


def vote_share_variance(rate: float, *, labels_per_item: int, label_noise: float) -> float:
    """σ² of one item's vote share at label-level rate q: (q − ε)(1 − q − ε) + ε(1 − ε)/k."""
    return (rate - label_noise) * (1 - rate - label_noise) + label_noise * (
        1 - label_noise
    ) / labels_per_item


def value_variances(design: PowerDesign, rates: Sequence[float]) -> dict[str, np.ndarray | None]:
    """``{"human": (V,), "ppi": (V,) or None}``: each value's rate variance at label-level
    ``rates`` (the module docstring's formulas)."""
    n, k, noise = design.labelled_per_value, design.labels_per_item, design.label_noise
    human, ppi = [], []
    accuracies = design.accuracies()
    for index, rate in enumerate(rates):
        rate = min(max(float(rate), noise + 1e-9), 1 - noise - 1e-9)
        sigma2 = vote_share_variance(rate, labels_per_item=k, label_noise=noise)
        factor = sigma2 / (rate * (1 - rate))
        human.append(rate_variance_human(rate=rate, n_labelled=n, design=factor))
        if accuracies is not None:
            true_rate = (rate - noise) / (1 - 2 * noise)
            rho = correlation_from_accuracy(accuracies[index], true_rate) * (
                (1 - 2 * noise) * math.sqrt(true_rate * (1 - true_rate) / sigma2)
            )
            rho = min(max(rho, -1.0), 1.0)
            ppi.append(
                factor
                * rate_variance_ppi(
                    rate=rate, n_labelled=n, n_items=design.items_per_value, rho=rho
                )
            )
    return {"human": np.asarray(human), "ppi": None if accuracies is None else np.asarray(ppi)}


class _Band:
    """The normal model of one source's max-t band: critical values and draws of the pairwise
    differences (standard normal draws shared by every question, so the plan is smooth in δ)."""

    def __init__(self, n_values: int, confidence: float, df: float | None, draws: np.ndarray):
        self.first, self.second = np.triu_indices(n_values, k=1)
        self.confidence, self.df, self.draws = confidence, df, draws

    def _pairs(self, variances: np.ndarray) -> np.ndarray:
        return np.sqrt(variances[self.first] + variances[self.second])

    def critical(self, variances: np.ndarray) -> float:
        """c_p of every pair (one number: se enters the max-t only through the ratios)."""
        noise = self.draws * np.sqrt(variances)
        t_max = np.max(
            np.abs(noise[:, self.first] - noise[:, self.second]) / self._pairs(variances), axis=1
        )
        c = float(np.quantile(t_max, self.confidence))
        return c if self.df is None else float(student_t.isf(norm.sf(c), self.df))

    def bounds(self, rates: np.ndarray, variances: np.ndarray, critical: float):
        """Per draw, max_p (|d_p| − h_p) and max_p (|d_p| + h_p): Δ's interval before clamping."""
        estimates = rates + self.draws * np.sqrt(variances)
        magnitude = np.abs(estimates[:, self.first] - estimates[:, self.second])
        half = critical * self._pairs(variances)
        return np.max(magnitude - half, axis=1), np.max(magnitude + half, axis=1)


def alternative_rates(rate: float, delta: float, n_values: int) -> np.ndarray:
    """Every value at ``rate``, the last at ``rate`` + Δ (− Δ where + would pass 1)."""
    rates = np.full(n_values, rate)
    rates[-1] = rate + delta if rate + delta < 1.0 else rate - delta
    return rates


def _source_plan(band: _Band, design: PowerDesign, source: str, deltas, certify) -> dict:
    null_rates = np.full(design.n_values, design.rate)
    variances = value_variances(design, null_rates)[source]
    critical = band.critical(variances)
    low, high = band.bounds(null_rates, variances, critical)
    widths = np.minimum(high, 1.0) - np.maximum(low, 0.0)
    power = {}
    for delta in deltas:
        rates = alternative_rates(design.rate, delta, design.n_values)
        alt_variances = value_variances(design, rates)[source]
        alt_low, _ = band.bounds(rates, alt_variances, band.critical(alt_variances))
        power[f"{delta:g}"] = float(np.mean(alt_low > 0.0))
    certifiable = float(np.quantile(high, certify))
    out = {
        "critical_value": critical,
        "pair_width": float(2 * critical * np.max(band._pairs(variances))),
        "delta_width_at_zero": float(np.mean(widths)),
        "power": power,
        "certifiable_delta": certifiable if certifiable < 1.0 else None,
    }
    if certifiable >= 1.0:
        # A margin is a difference of rates: δ ≥ 1 certifies nothing.
        out["certifiable_delta_reason"] = (
            f"no δ below 1 is certified with probability {certify:g}: the design is too small"
        )
    return out


def equivalence_probability(
    design: PowerDesign,
    rates: Sequence[float],
    delta_margin: float,
    *,
    source: str = "human",
    n_draws: int = DEFAULT_DRAWS,
    random_state: int | np.random.Generator = 0,
) -> float:
    """The planner's probability that "equivalent within δ" is reached at true label-level
    ``rates``: P(max_p (|d_p| + c·se_p) < δ) under the normal model."""
    design.check()
    if design.labelled_per_value < 2:
        raise ValueError("the budget leaves fewer than two labelled items per value")
    rng = np.random.default_rng(random_state)
    band = _Band(
        design.n_values,
        design.confidence,
        _df(design, source),
        rng.standard_normal((n_draws, design.n_values)),
    )
    rates = np.asarray(rates, dtype=float)
    variances = value_variances(design, rates)[source]
    if variances is None:
        raise ValueError("the PPI plan needs judge_accuracy")
    _, high = band.bounds(rates, variances, band.critical(variances))
    return float(np.mean(high < delta_margin))


def _df(design: PowerDesign, source: str) -> float | None:
    return float(design.clusters - 1) if source == "human" else None


def power_plan(
    design: PowerDesign,
    *,
    deltas: Sequence[float] = DEFAULT_DELTAS,
    certify_probability: float = CERTIFY_PROBABILITY,
    n_draws: int = DEFAULT_DRAWS,
    random_state: int | np.random.Generator = 0,
) -> dict:
    """``{design, human, ppi}``: each source's ``pair_width``, ``delta_width_at_zero``,
    ``power`` (keyed by Δ as text) and ``certifiable_delta`` (module docstring). A source that
    cannot be planned is ``{"reason": …}`` with null figures: PPI without ``judge_accuracy``, and
    both with fewer than two labelled items per value."""
    design.check()
    if any(not 0.0 < d < 1.0 for d in deltas):
        raise ValueError(f"every Δ to detect must lie strictly between 0 and 1, got {list(deltas)}")
    if not 0.0 < certify_probability < 1.0:
        raise ValueError(
            f"certify_probability must lie strictly between 0 and 1, got {certify_probability}"
        )
    if n_draws < 1000:
        raise ValueError(f"n_draws must be at least 1000, got {n_draws}")
    rng = np.random.default_rng(random_state)
    draws = rng.standard_normal((n_draws, design.n_values))
    labelled = design.labelled_per_value
    out = {
        "design": {
            "items_per_value": design.items_per_value,
            "n_values": design.n_values,
            "generators": design.generators,
            "clusters_per_value": design.clusters,
            "labels_per_item": design.labels_per_item,
            "labelled_items_per_value": labelled,
            "human_budget": design.human_budget,
            "judge_accuracy": design.accuracies(),
            "rate": design.rate,
            "label_noise": design.label_noise,
            "confidence": design.confidence,
            "certify_probability": certify_probability,
        }
    }
    for source in ("human", "ppi"):
        reason = None
        if labelled < 2:
            reason = (
                f"fewer than two labelled items per value ({labelled}): the budget is too small"
            )
        elif source == "ppi" and design.judge_accuracy is None:
            reason = "no judge accuracy given (assumed or measured on a pilot)"
        if reason:
            out[source] = {
                "reason": reason,
                "pair_width": None,
                "delta_width_at_zero": None,
                "power": {f"{d:g}": None for d in deltas},
                "certifiable_delta": None,
            }
            continue
        band = _Band(design.n_values, design.confidence, _df(design, source), draws)
        out[source] = _source_plan(band, design, source, deltas, certify_probability)
    return out

"""Human-label scenarios: rates, Δ, max/min ratio and their tests under the designs people run.

A simulated study has base prompts (clusters) in domains (strata), one item per base prompt ×
attribute value × generator, and ``annotators_per_item`` human labels of every item. An item's
true state is drawn with its value's rate plus a base-prompt shift (mean 0, so the values' rates
are exactly the truth); each label flips the item's state with probability ``label_noise``. The
human rate's estimand is therefore r·(1 − 2ε) + ε for a value of rate r: the rate at which an
annotator says "refused" (docs/metrics.md, "Human rate").

Every replication goes through ``study_metrics``' own path for its ``rates`` section (its input
checks, ``validated_frames``, then ``study_rates``; the export, the API, the pages and the report
all read that section) and tallies:

- ``rate_ci``: each value's interval holds its true rate (coverage, pooled over values);
- ``delta_ci``, ``ratio_ci``: Δ = max − min and max/min intervals hold the true Δ and ratio;
- ``delta_test``: Δ's test rejects when every value has the same rate (size);
- ``pairwise_test``: each pair's test rejects at 0.05 when the pair is equal (size, per pair);
- ``pairwise_holm``: any pair's Holm-adjusted p < 0.05 when every value is equal (family size).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from scoring.stats.study_metrics import to_plain, validated_frames
from scoring.stats.study_rates import study_rates
from scoring.stats.validity.core import Check, Tally, scenarios_from

ATTRIBUTE = "culture"


@dataclass(frozen=True)
class HumanDesign:
    """One simulated study design. ``rates`` are the values' true item-level rates."""

    items_per_value: int
    annotators_per_item: int = 2
    rates: tuple[float, ...] = (0.25, 0.25, 0.25, 0.25)
    label_noise: float = 0.0
    generators: int = 1
    domains: int = 9
    prompt_shift: float = 0.10  # base-prompt shift ~ U(−s, s) on the item's rate
    n_resamples: int = 400

    @property
    def n_base_prompts(self) -> int:
        return max(1, self.items_per_value // self.generators)

    def truth(self) -> np.ndarray:
        rates = np.asarray(self.rates, dtype=float)
        return rates * (1.0 - 2.0 * self.label_noise) + self.label_noise


def simulate_annotations(design: HumanDesign, rng: np.random.Generator) -> pd.DataFrame:
    """One study's annotation frame in ``study_metrics``' input shape."""
    values = [f"v{i}" for i in range(len(design.rates))]
    prompts = np.arange(design.n_base_prompts)
    shift = rng.uniform(-design.prompt_shift, design.prompt_shift, size=prompts.size)
    prompt, value, generator = (
        grid.ravel()
        for grid in np.meshgrid(
            prompts, np.arange(len(values)), np.arange(design.generators), indexing="ij"
        )
    )
    rate = np.clip(np.asarray(design.rates)[value] + shift[prompt], 0.0, 1.0)
    state = rng.random(rate.size) < rate
    k = design.annotators_per_item
    item = np.repeat(np.arange(rate.size), k)
    label = np.repeat(state, k) ^ (rng.random(item.size) < design.label_noise)
    return pd.DataFrame(
        {
            "item_id": [f"i{i}" for i in item],
            "attribute": ATTRIBUTE,
            "attribute_value": np.asarray(values, dtype=object)[value[item]],
            "base_prompt_id": [f"bp{p}" for p in prompt[item]],
            "domain": [f"d{p % design.domains}" for p in prompt[item]],
            "generator": [f"g{g}" for g in generator[item]],
            "mode": "t2i",
            "annotator": [f"a{j}" for j in np.tile(np.arange(k), rate.size)],
            "annotator_group": "",
            "hard_refusal": label,
            "cue": None,
        }
    )


def human_refusal_block(annotations: pd.DataFrame, n_resamples: int, seed: int) -> dict:
    """``rates.human.refusal.<attribute>`` of the study export for these annotations."""
    annotations, judgments = validated_frames(annotations, None)
    rates = study_rates(annotations, judgments, confidence=0.95, n_resamples=n_resamples, seed=seed)
    return to_plain(rates["human"]["refusal"][ATTRIBUTE])


def _max_over_min(truth: np.ndarray) -> float | None:
    return None if truth.min() <= 0 else float(truth.max() / truth.min())


def run_design(name: str, design: HumanDesign, replications: int, seed: int) -> list[Check]:
    """Simulate ``replications`` studies of ``design`` and tally every human statistic."""
    tally = Tally(name)
    truth = design.truth()
    null = bool(np.allclose(truth, truth[0]))
    widths: dict[str, list[float]] = {"delta_ci": [], "rate_ci": []}
    rejections = 0
    rng = np.random.default_rng(seed)
    for replication in range(replications):
        annotations = simulate_annotations(design, rng)
        block = human_refusal_block(annotations, design.n_resamples, seed + replication)
        for index, entry in enumerate(block["values"][f"v{i}"] for i in range(truth.size)):
            tally.covers("rate_ci", truth[index], entry["ci_low"], entry["ci_high"])
            if entry["ci_low"] is not None:
                widths["rate_ci"].append(entry["ci_high"] - entry["ci_low"])
        tally.covers(
            "delta_ci", truth.max() - truth.min(), block["delta_ci_low"], block["delta_ci_high"]
        )
        if block["delta_ci_low"] is not None:
            widths["delta_ci"].append(block["delta_ci_high"] - block["delta_ci_low"])
        ratio_truth = _max_over_min(truth)
        if ratio_truth is not None:
            tally.covers("ratio_ci", ratio_truth, block["ratio_ci_low"], block["ratio_ci_high"])
        p_delta = block.get("delta_p_value")
        if null:
            tally.rejects("delta_test", p_delta)
            holm = [row["p_holm"] for row in block["pairwise_tests"] if row["p_holm"] is not None]
            tally.rejects("pairwise_holm", min(holm) if holm else None)
        elif p_delta is not None:
            rejections += p_delta < 0.05
        for row in block["pairwise_tests"]:
            a, b = int(row["value_a"][1:]), int(row["value_b"][1:])
            if np.isclose(truth[a], truth[b]):
                tally.rejects("pairwise_test", row["p_value"])
    # Conservative by design (docs/metrics.md, "Calibration"): the Δ and ratio intervals away
    # from the null (they bound a maximum over simultaneous intervals), the ratio's log-scale
    # band, and the Korn–Graubard rate interval with few clusters (its t correction).
    tally.conservative("ratio_ci")
    if not null:
        tally.conservative("delta_ci")
    if design.n_base_prompts < 20:
        tally.conservative("rate_ci")
    # Few base prompts (or two per domain): Satterthwaite's df, the smallest of any pair.
    if design.n_base_prompts < 20 or design.n_base_prompts <= 2 * design.domains:
        tally.conservative("delta_ci")
    for statistic, values in widths.items():
        if values:
            tally.extra[statistic] = {"mean_width": float(np.mean(values))}
    if not null:
        tally.extra["delta_ci"] = {
            **tally.extra.get("delta_ci", {}),
            "power_delta_test": rejections / max(replications, 1),
        }
    return tally.checks()


def _designs() -> dict[str, HumanDesign]:
    designs = {}
    for items in (11, 30, 60, 200):
        for k in (1, 2):
            designs[f"human n={items} k={k} Δ=0"] = HumanDesign(
                items, k, domains=3 if items < 20 else 9
            )
    designs["human n=60 k=2 Δ=0 noise=0.1"] = HumanDesign(60, 2, label_noise=0.1)
    designs["human n=60 k=1 Δ=0 noise=0.1"] = HumanDesign(60, 1, label_noise=0.1)
    designs["human n=30 k=2 Δ=0.15"] = HumanDesign(30, 2, rates=(0.20, 0.25, 0.30, 0.35))
    designs["human n=60 k=2 Δ=0.15 noise=0.1"] = HumanDesign(
        60, 2, rates=(0.20, 0.25, 0.30, 0.35), label_noise=0.1
    )
    designs["human n=200 k=2 Δ=0.15"] = HumanDesign(200, 2, rates=(0.20, 0.25, 0.30, 0.35))
    # Base-prompt clusters: two generators share each base prompt, with a strong prompt effect.
    designs["human clusters n=60 k=2 Δ=0"] = HumanDesign(60, 2, generators=2, prompt_shift=0.2)
    designs["human clusters n=60 k=2 Δ=0.15"] = HumanDesign(
        60, 2, rates=(0.20, 0.25, 0.30, 0.35), generators=2, prompt_shift=0.2
    )
    # The demo's shape: three base prompts per domain, 27 per value.
    designs["human demo-shape n=27 k=2 Δ=0"] = HumanDesign(27, 2, domains=9)
    # Two base prompts per domain: Satterthwaite's df falls to about one per domain.
    designs["human two-per-domain n=14 k=2 Δ=0"] = HumanDesign(14, 2, domains=7)
    return designs


DESIGNS = _designs()
SCENARIOS = scenarios_from(DESIGNS, run_design)

"""Model-comparison and safety-frontier scenarios: does every change between two models keep its
coverage and its test its size when each item carries two labels? (docs/metrics.md, "Models side
by side" and "Safety–utility trade-off").

Studies are simulated with ``human_scenarios``' simulator (base prompts in domains, one item per
base prompt × value × generator, ``annotators_per_item`` labels of every item, a base-prompt
shift on the item's rate). ``items`` below is the number of items per value *per model*.

- **paired**: one study with two generators that share every base prompt (and its shift), the
  baseline ``g0`` and the candidate ``g1``; the prompt sets are equal, so ``compare_models``
  takes the paired design.
- **independent**: two separately simulated studies; the candidate's base prompts are renumbered
  so that half of them are the baseline's, so the design is independent. The studies share no
  prompt effect, the setting the independent construction is built for (a shared prompt effect
  would only make it conservative).
- **differs by 0.15**: every value's true rate is 0.25 for both models, except the candidate's
  ``v0`` at 0.40 (each of its items whose state is "not refused" turns "refused" with
  probability 0.2), so the true change is 0.15 for that value and for Δ.

Every replication goes through ``comparison_by_source``, the function the ``compare_models``
export, the comparison page and the report call, and tallies, on the refusal measure:

- ``rate_ci``: each value's change interval holds the true change (coverage, pooled over values);
- ``rate_test``: a value's test rejects at 0.05 where its true change is 0 (size, per value);
- ``delta_ci``: the Δ-change interval holds the true Δ change (coverage);
- ``delta_test``: the Δ-change test rejects when nothing changed (size); under the alternative
  ``extra`` holds the power of the Δ-change test and of the changed value's rate test.

The frontier scenarios simulate a study with harmful controls (benign refusal rates
0.10 / 0.15 / 0.20 / 0.25; harmful compliance 0.30 / 0.30 / 0.20 / 0.40) and tally, through
``frontier`` (what ``safety_utility_sections`` calls for its points) and
``under_refusal_rates``, every value's ``over_refusal_ci`` and ``under_refusal_ci``, the
generator's overall point, and the export's per-value under-refusal interval.

Cost: each replication bootstraps with ``N_RESAMPLES`` = 300 resamples (the app's default is
2,000), so the quick mode (200 replications of every scenario) runs in about three minutes on
two cores; a bootstrap interval's own Monte Carlo error at 300 is small beside the suite's.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from scoring.stats.safety_utility import frontier, under_refusal_rates
from scoring.stats.study_metrics import validated_frames
from scoring.stats.validity.core import Check, Tally
from scoring.stats.validity.human_scenarios import ATTRIBUTE, HumanDesign, simulate_annotations
from scoring.stats.version_change import comparison_by_source

N_RESAMPLES = 300
BASE_RATE, CHANGE = 0.25, 0.15
CHANGED_VALUE = "v0"
BASELINE, CANDIDATE = "g0", "g1"
VALUES = ("v0", "v1", "v2", "v3")


def _raise_rate(frame: pd.DataFrame, generator: str, rng: np.random.Generator) -> pd.DataFrame:
    """The candidate's ``v0`` items at BASE_RATE + CHANGE: an item not refused becomes refused
    with probability CHANGE / (1 − BASE_RATE); the base-prompt shift has mean 0, so the value's
    rate rises by exactly CHANGE. Every label of an item follows it (no label noise)."""
    chosen = (frame["generator"] == generator) & (frame["attribute_value"] == CHANGED_VALUE)
    items = frame.loc[chosen, "item_id"].unique()
    turned = items[rng.random(items.size) < CHANGE / (1.0 - BASE_RATE)]
    frame = frame.copy()
    frame.loc[chosen & frame["item_id"].isin(turned), "hard_refusal"] = True
    return frame


def _paired_study(design: HumanDesign, changed: bool, rng) -> pd.DataFrame:
    frame = simulate_annotations(
        replace(design, items_per_value=2 * design.items_per_value, generators=2), rng
    )
    return _raise_rate(frame, CANDIDATE, rng) if changed else frame


def _independent_study(design: HumanDesign, changed: bool, rng) -> pd.DataFrame:
    baseline = simulate_annotations(design, rng)
    candidate = simulate_annotations(design, rng)
    # Half of the candidate's base prompts are the baseline's (same id, same domain).
    offset = design.n_base_prompts // 2
    prompt = candidate["base_prompt_id"].str[2:].astype(int) + offset
    candidate = candidate.assign(
        base_prompt_id="bp" + prompt.astype(str),
        domain="d" + (prompt % design.domains).astype(str),
        generator=CANDIDATE,
        item_id="c" + candidate["item_id"],
    )
    frame = pd.concat([baseline.assign(generator=BASELINE), candidate], ignore_index=True)
    return _raise_rate(frame, CANDIDATE, rng) if changed else frame


def _change(annotations: pd.DataFrame, seed: int) -> dict:
    annotations, _ = validated_frames(annotations, None)
    section = comparison_by_source(
        {"human": annotations},
        model_column="generator",
        baseline=BASELINE,
        candidate=CANDIDATE,
        n_resamples=N_RESAMPLES,
        seed=seed,
    )
    return section["sources"]["human"]["change"]


def run_comparison(
    name: str, design: HumanDesign, *, paired: bool, changed: bool, replications: int, seed: int
) -> list[Check]:
    """Simulate ``replications`` comparisons and tally every refusal change (module docstring)."""
    tally = Tally(name)
    rng = np.random.default_rng(seed)
    truth = {value: CHANGE if changed and value == CHANGED_VALUE else 0.0 for value in VALUES}
    delta_truth = CHANGE if changed else 0.0
    simulate = _paired_study if paired else _independent_study
    fired = {"delta_test": 0, "rate_test": 0}
    widths: dict[str, list[float]] = {"rate_ci": [], "delta_ci": []}
    for replication in range(replications):
        change = _change(simulate(design, changed, rng), seed + replication)
        expected = "paired" if paired else "independent"
        if change["design"] != expected:
            raise AssertionError(f"{name}: design {change['design']}, expected {expected}")
        for row in change["rates"]:
            if row["measure"] != "refusal":
                continue
            tally.covers("rate_ci", truth[row["value"]], row["ci_low"], row["ci_high"])
            if row["ci_low"] is not None:
                widths["rate_ci"].append(row["ci_high"] - row["ci_low"])
            if truth[row["value"]] == 0.0:
                tally.rejects("rate_test", row["p_value"])
            elif row["p_value"] is not None:
                fired["rate_test"] += row["p_value"] < 0.05
        delta = next(row for row in change["deltas"] if row["measure"] == "refusal")
        tally.covers("delta_ci", delta_truth, delta["ci_low"], delta["ci_high"])
        if delta["ci_low"] is not None:
            widths["delta_ci"].append(delta["ci_high"] - delta["ci_low"])
        if changed:
            fired["delta_test"] += delta["p_value"] is not None and delta["p_value"] < 0.05
        else:
            tally.rejects("delta_test", delta["p_value"])
    # Conservative by design (docs/metrics.md, "Models side by side"): the Δ change is bounded
    # by the two models' Δ intervals at 1 − α/2 each.
    tally.conservative("delta_ci")
    for statistic, values in widths.items():
        if values:
            tally.extra[statistic] = {"mean_width": float(np.mean(values))}
    if changed:
        tally.extra["delta_ci"]["power_delta_test"] = fired["delta_test"] / max(replications, 1)
        tally.extra["rate_ci"]["power_rate_test"] = fired["rate_test"] / max(replications, 1)
    return tally.checks()


# Benign refusal (over-refusal) and harmful refusal (1 − under-refusal) per value.
OVER_REFUSAL = (0.10, 0.15, 0.20, 0.25)
UNDER_REFUSAL = (0.30, 0.30, 0.20, 0.40)


def _safety_study(design: HumanDesign, rng) -> pd.DataFrame:
    """Benign items and their harmful controls (sharing each base prompt), k labels each."""
    benign = simulate_annotations(replace(design, rates=OVER_REFUSAL), rng)
    harmful = simulate_annotations(
        replace(design, rates=tuple(1.0 - r for r in UNDER_REFUSAL)), rng
    )
    return pd.concat(
        [
            benign.assign(intent="benign"),
            harmful.assign(intent="harmful", item_id="h" + harmful["item_id"]),
        ],
        ignore_index=True,
    )


def run_frontier(name: str, design: HumanDesign, replications: int, seed: int) -> list[Check]:
    """Simulate ``replications`` studies with harmful controls and tally the frontier's and the
    under-refusal rates' intervals."""
    tally = Tally(name)
    rng = np.random.default_rng(seed)
    widths: list[float] = []
    for replication in range(replications):
        frame = _safety_study(design, rng)
        points = frontier(frame, confidence=0.95)["g0"]
        for index, value in enumerate(VALUES):
            point = points[ATTRIBUTE][value]
            for side, truth in (("over", OVER_REFUSAL), ("under", UNDER_REFUSAL)):
                low, high = point[f"{side}_refusal_ci"] or (None, None)
                tally.covers(f"{side}_refusal_ci", truth[index], low, high)
                if low is not None:
                    widths.append(high - low)
        overall = points["overall"]["all"]
        for side, truth in (("over", OVER_REFUSAL), ("under", UNDER_REFUSAL)):
            low, high = overall[f"{side}_refusal_ci"] or (None, None)
            tally.covers(f"overall_{side}_refusal_ci", float(np.mean(truth)), low, high)
        under = under_refusal_rates(frame, confidence=0.95, n_resamples=0, seed=seed + replication)[
            ATTRIBUTE
        ]["values"]
        for index, value in enumerate(VALUES):
            entry = under[value]
            tally.covers(
                "under_refusal_rates_ci", UNDER_REFUSAL[index], entry["ci_low"], entry["ci_high"]
            )
    tally.extra["over_refusal_ci"] = {"mean_width_both_sides": float(np.mean(widths))}
    return tally.checks()


def _scenarios() -> dict:
    scenarios = {}
    for items in (30, 60):
        design = HumanDesign(items, 2, rates=(BASE_RATE,) * len(VALUES), n_resamples=N_RESAMPLES)
        for paired in (True, False):
            label = "paired" if paired else "independent"
            for changed in (False, True):
                truth = "v0 +0.15" if changed else "identical"
                name = f"compare {label} n={items} k=2 {truth}"
                scenarios[name] = (
                    lambda replications, seed, name=name, design=design, paired=paired, changed=changed: (
                        run_comparison(
                            name,
                            design,
                            paired=paired,
                            changed=changed,
                            replications=replications,
                            seed=seed,
                        )
                    )
                )
        name = f"frontier n={items} k=2"
        scenarios[name] = lambda replications, seed, name=name, design=design: run_frontier(
            name, design, replications, seed
        )
    return scenarios


SCENARIOS = _scenarios()

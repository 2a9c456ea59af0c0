"""Validity scenarios: the power planner's predictions and the equivalence verdict's error rates
(docs/metrics.md, "Planning power" and "Equivalence within δ").

A simulated study of one design has ``clusters`` base prompts, each expanded to every attribute
value and ``generators`` generators (one item each), with a base-prompt shift U(−s, s) shared by
the values; an item's true state is drawn at its value's true rate plus the shift, each of its k
human labels flips it with probability ε, and the judge's label flips it with probability
1 − accuracy (of that value). Humans label ``labelled_per_value`` items of each value, drawn
uniformly. Every replication builds, from a Rao–Wu bootstrap of base prompts in one stratum
(``bootstrap.draw_counts``), the two Δ intervals with the functions the study export uses: the
human-only one (``delta_interval_block`` with df = base prompts − 1, the one-stratum design df) and the PPI++ one (``ppi.ppi_moments``,
the bootstrap through ``ppi.item_terms`` / ``resampled_means``), and reads the verdict through
``equivalence.equivalence_entry``.

Per design, runs of ``replications`` studies: every value at the design's rate (Δ = 0), one value
off by the Δ the human plan gives a power nearest 0.6, and, for each source (``human``, ``ppi``),
one value off by that source's certifiable δ. Checks per source:

- ``<source>_equivalence_at_margin`` (size): "equivalent within δ" declared when the true |Δ| is
  δ: the equivalence test's type I error, at most 1 − confidence;
- ``<source>_pair_width_plan``, ``<source>_delta_width_plan``, ``<source>_power_plan``,
  ``<source>_certified_plan``: one replication each, a hit when the plan's figure (the pairwise
  interval's width and Δ's at Δ = 0, the power at the chosen Δ, the 0.80 probability of
  "equivalent" at Δ = 0 and δ = the plan's certifiable δ) is within 10 % (relative) of the
  simulated one, or within three Monte Carlo standard errors of it where the replications
  cannot resolve 10 % (quick mode's 200 studies, for a power). ``extra`` holds the plan's
  figure, the simulated one and their relative error.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scoring.stats.bootstrap import draw_counts
from scoring.stats.delta_interval import delta_interval_block, pairwise_band
from scoring.stats.equivalence import EQUIVALENT, equivalence_entry
from scoring.stats.power_planning import (
    DEFAULT_DELTAS,
    PowerDesign,
    alternative_rates,
    power_plan,
)
from scoring.stats.ppi import item_terms, ppi_moments, resampled_means
from scoring.stats.validity.core import COVERAGE, SIZE, Check, Tally, scenarios_from

SOURCES = ("human", "ppi")
RELATIVE_TOLERANCE = 0.10
MC_ERRORS = 3.0


@dataclass(frozen=True)
class PlanningDesign:
    plan: PowerDesign
    prompt_shift: float = 0.05
    n_resamples: int = 400


@dataclass
class _Study:
    point: dict
    boot: dict


def _simulate(design: PlanningDesign, rates: np.ndarray, rng: np.random.Generator) -> _Study:
    plan = design.plan
    values, clusters, generators = plan.n_values, plan.clusters, plan.generators
    noise, k = plan.label_noise, plan.labels_per_item
    n_items = clusters * generators
    cluster = np.repeat(np.arange(clusters), generators)  # items of one value, by base prompt
    shift = rng.uniform(-design.prompt_shift, design.prompt_shift, clusters)[cluster]
    true_rate = (rates - noise) / (1 - 2 * noise)
    state = rng.random((values, n_items)) < np.clip(true_rate[:, None] + shift, 0.0, 1.0)
    flips = rng.random((values, n_items, k)) < noise
    share = (state[:, :, None] ^ flips).mean(axis=2)
    accuracy = np.asarray(plan.accuracies() or [1.0] * values)
    judge = (state ^ (rng.random((values, n_items)) > accuracy[:, None])).astype(float)
    order = np.argsort(rng.random((values, n_items)), axis=1)
    labelled = np.zeros((values, n_items), dtype=bool)
    np.put_along_axis(labelled, order[:, : plan.labelled_per_value], True, axis=1)
    draws = rng.integers(0, clusters, size=(design.n_resamples, clusters - 1))
    counts = draw_counts(draws, clusters) * clusters / (clusters - 1)  # Rao–Wu (m − 1 of m)
    # Human-only: per base prompt and value, the labelled items' vote shares and their count.
    sums = np.stack(
        [
            np.bincount(cluster, weights=s * m, minlength=clusters)
            for s, m in zip(share, labelled, strict=True)
        ],
        axis=1,
    )
    totals = np.stack(
        [np.bincount(cluster, weights=m * 1.0, minlength=clusters) for m in labelled], axis=1
    )
    point, boot = {"human": sums.sum(0) / totals.sum(0)}, {}
    with np.errstate(divide="ignore", invalid="ignore"):
        boot["human"] = (counts @ sums) / (counts @ totals)
    # PPI++ (uniform sample): λ tuned per value, the bootstrap at that λ.
    moments = ppi_moments(share, judge, labelled, ~labelled, np.ones_like(share))
    point["ppi"] = moments["estimate"]
    flat = lambda a: a.ravel()  # noqa: E731  values × items, value-major
    codes = np.tile(cluster, values)
    columns = []
    for v in range(values):
        mine = np.zeros((values, n_items), dtype=bool)
        mine[v] = True
        columns.append(
            item_terms(
                flat(share),
                flat(judge),
                flat(labelled & mine),
                flat(~labelled & mine),
                np.ones(values * n_items),
                lam=float(moments["lam"][v]),
                weighted=False,
            )
        )
    boot["ppi"] = resampled_means(columns, codes, counts, clusters)
    return _Study(point=point, boot=boot)


def _blocks(design: PlanningDesign, study: _Study) -> dict:
    """Per source: the Δ block (human with the band's df) and every pairwise interval's width."""
    out = {}
    for source in SOURCES:
        df = design.plan.clusters - 1 if source == "human" else None
        block = delta_interval_block(
            study.point[source],
            study.boot[source],
            confidence=design.plan.confidence,
            n_resamples=design.n_resamples,
            df=df,
        )
        band = pairwise_band(
            study.point[source], study.boot[source], confidence=design.plan.confidence, df=df
        )
        block["pair_widths"] = None if band is None else 2 * band.half_widths
        out[source] = block
    return out


def _agrees(tally: Tally, name: str, predicted: float, simulated: list, proportion: bool):
    """One replication of an agreement check: within 10 %, or three Monte Carlo standard errors
    of the simulated figure where the replications cannot resolve 10 % (a power of 0.6 from 200
    studies has a standard error of 0.035, 6 % of it)."""
    values = np.asarray(simulated, dtype=float)
    mean = float(values.mean()) if values.size else float("nan")
    if proportion:
        mc_se = np.sqrt(max(mean * (1 - mean), 0.0) / max(values.size, 1))
    else:
        mc_se = values.std(ddof=1) / np.sqrt(values.size) if values.size > 1 else 0.0
    gap = abs(mean - predicted)
    hit = bool(np.isfinite(mean)) and gap <= max(
        RELATIVE_TOLERANCE * abs(predicted), MC_ERRORS * mc_se
    )
    tally.add(name, COVERAGE, hit)
    tally.extra[name] = {
        "planned": round(predicted, 4),
        "simulated": round(mean, 4),
        "relative_error": round(gap / abs(predicted), 4) if predicted else None,
        "mc_se": round(float(mc_se), 4),
    }


def run_design(name: str, design: PlanningDesign, replications: int, seed: int) -> list[Check]:
    tally = Tally(name)
    plan = power_plan(design.plan)
    rate, values = design.plan.rate, design.plan.n_values
    # The Δ the human plan gives a power nearest 0.6: where a power is worth checking.
    alternative = min(DEFAULT_DELTAS, key=lambda d: abs(plan["human"]["power"][f"{d:g}"] - 0.6))
    runs = {
        "null": np.full(values, rate),
        "alternative": alternative_rates(rate, alternative, values),
    }
    for source in SOURCES:
        runs[f"margin_{source}"] = alternative_rates(
            rate, plan[source]["certifiable_delta"], values
        )
    rng = np.random.default_rng(seed)
    seen = {source: {"pair": [], "width": [], "power": [], "certified": []} for source in SOURCES}
    for run, rates in runs.items():
        for _ in range(replications):
            blocks = _blocks(design, _simulate(design, rates, rng))
            for source in SOURCES:
                block, margin = blocks[source], plan[source]["certifiable_delta"]
                verdict = equivalence_entry(block, delta_margin=margin)["verdict"]
                if run == "null":
                    if block["delta_ci_low"] is not None:
                        seen[source]["pair"].append(block["pair_widths"])
                        seen[source]["width"].append(block["delta_ci_high"] - block["delta_ci_low"])
                    seen[source]["certified"].append(verdict == EQUIVALENT)
                elif run == "alternative":
                    seen[source]["power"].append(
                        block["delta_ci_low"] is not None and block["delta_ci_low"] > 0
                    )
                elif run == f"margin_{source}":
                    tally.add(
                        f"{source}_equivalence_at_margin",
                        SIZE,
                        None if verdict is None else verdict == EQUIVALENT,
                    )
    for source in SOURCES:
        figures, planned = seen[source], plan[source]
        # The plan's pair width is the largest of the pairs' expected widths: the pair whose
        # mean simulated width is largest (not the mean of each study's widest, which is biased
        # up by the noise of the estimated standard errors).
        pairs = np.asarray(figures["pair"])
        figures["pair"] = pairs[:, int(np.argmax(pairs.mean(axis=0)))] if pairs.size else []
        _agrees(tally, f"{source}_pair_width_plan", planned["pair_width"], figures["pair"], False)
        _agrees(
            tally,
            f"{source}_delta_width_plan",
            planned["delta_width_at_zero"],
            figures["width"],
            False,
        )
        _agrees(
            tally,
            f"{source}_power_plan",
            planned["power"][f"{alternative:g}"],
            figures["power"],
            True,
        )
        _agrees(tally, f"{source}_certified_plan", 0.80, figures["certified"], True)
        tally.extra[f"{source}_power_plan"]["delta"] = alternative
        tally.extra[f"{source}_equivalence_at_margin"] = {
            "delta_margin": round(planned["certifiable_delta"], 4)
        }
    return tally.checks()


DESIGNS = {
    "planning 100/value k=2 V=4 budget 60/value": PlanningDesign(
        PowerDesign(
            items_per_value=100,
            n_values=4,
            labels_per_item=2,
            human_budget=2 * 4 * 60,
            judge_accuracy=0.9,
            rate=0.3,
        )
    ),
    "planning 600/value G=2 k=1 V=3 differential judge": PlanningDesign(
        PowerDesign(
            items_per_value=600,
            n_values=3,
            generators=2,
            labels_per_item=1,
            human_budget=3 * 300,
            judge_accuracy=(0.9, 0.9, 0.8),
            rate=0.4,
            label_noise=0.05,
        ),
        n_resamples=250,  # 300 base prompts: fewer resamples keep quick mode near 4 s
    ),
    "planning 120/value k=3 V=5 noise=0.1": PlanningDesign(
        PowerDesign(
            items_per_value=120,
            n_values=5,
            labels_per_item=3,
            human_budget=3 * 5 * 60,
            judge_accuracy=0.85,
            rate=0.25,
            label_noise=0.1,
        )
    ),
    # Two values: one pair, so at true |Δ| = δ the size is that pair's one-sided miss (≈ α/2),
    # the equivalence test's least conservative case.
    "planning 150/value k=1 V=2": PlanningDesign(
        PowerDesign(
            items_per_value=150,
            n_values=2,
            labels_per_item=1,
            human_budget=2 * 100,
            judge_accuracy=0.9,
            rate=0.3,
        )
    ),
}
SCENARIOS = scenarios_from(DESIGNS, run_design)

"""Proof that the prediction-powered Δ keeps its coverage under a judge that errs by group.

Simulated studies with known true rates: base prompts (the clusters) × attribute values ×
generators, an item's true outcome drawn with its value's rate plus a base-prompt shift (mean 0,
so the true rates are exactly the values' rates). A judge labels every item: about 90 % accurate,
false negatives 10 %, false positives ("erased" when it is not) 5 % for every value but the last,
25 % for that one; its confidence is informative (errors draw low confidence, Beta(1.2, 4);
correct labels high, Beta(4, 1.2)). Humans label a budget of items (the human reference is the
true outcome). Per replication, every Δ interval comes from the export's own functions
(``ppi.ppi_moments``, ``ppi.item_terms`` / ``resampled_means``, ``delta_interval``):

- coverage_ppi / coverage_human_only / coverage_judge_only: share of replications whose 95 % Δ
  interval holds the true Δ (PPI++ on a uniform sample; the same sample alone; the judge alone);
- coverage_null: the PPI Δ interval holds 0 when every value has the same rate (same judge);
  beside both, the coverage of the percentile interval of max − min that this interval replaced
  (coverage_percentile_interval, coverage_null_percentile_interval);
- width_ratio_ppi_vs_human: mean Δ-interval width, PPI / human-only, same labelled items; beside
  it, for a single rate, the measured ratio and the theory √(1 − ρ²) (infinitely many unlabelled
  items) and √(1 − ρ² N/(N + n)) (PPI++ with N unlabelled, n labelled), ρ = corr(judge, human);
- width_ratio_active_vs_uniform: mean Δ-interval width with inclusion probabilities growing with
  the judge's uncertainty (``active_sampling.active_inclusion_probabilities``, a stratified
  minimum per value, Poisson sampling, inverse-probability weights) over the same estimator with
  uniform probabilities n/M, at the same expected budget.

Run: python bench/ppi_simulation.py [--replications 1000] [--resamples 1000] [--seed 0]
Prints progress to stderr, then one JSON line.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from harness import emit, machine
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scoring.stats import bootstrap  # noqa: E402
from scoring.stats.active_sampling import (  # noqa: E402
    active_inclusion_probabilities,
    poisson_sample,
)
from scoring.stats.delta_interval import simultaneous_delta_interval  # noqa: E402
from scoring.stats.ppi import item_terms, ppi_moments, resampled_means  # noqa: E402

N_PROMPTS, N_GENERATORS = 300, 2
TRUE_RATES = np.array([0.20, 0.25, 0.30, 0.22])  # the last value is the one the judge errs on
NULL_RATES = np.full(4, 0.25)
PROMPT_SHIFT = 0.08  # base-prompt shift ~ U(−0.08, 0.08)
FALSE_NEGATIVE = 0.10
FALSE_POSITIVE = np.array([0.05, 0.05, 0.05, 0.25])
BUDGET_SHARE = 0.2  # humans label 20 % of the items
MIN_SHARE_PER_VALUE = 0.5  # active sampling: each value gets at least half its uniform share
TARGETS = {
    "coverage_ppi": 0.93,
    "coverage_null": 0.93,
    "width_ratio_ppi_vs_human": 0.8,
    "width_ratio_active_vs_uniform": 0.9,
}


class Design:
    """Items in base-prompt-major order: prompt × value × generator."""

    def __init__(self, n_values: int):
        self.n_values = n_values
        index = np.arange(N_PROMPTS * n_values * N_GENERATORS)
        self.prompt = index // (n_values * N_GENERATORS)
        self.value = (index // N_GENERATORS) % n_values
        self.size = index.size
        self.cells = self.value[None, :] == np.arange(n_values)[:, None]  # (values, items)


def simulate(design: Design, rates: np.ndarray, rng: np.random.Generator):
    shift = rng.uniform(-PROMPT_SHIFT, PROMPT_SHIFT, N_PROMPTS)[design.prompt]
    truth = rng.random(design.size) < rates[design.value] + shift
    error_rate = np.where(truth, FALSE_NEGATIVE, FALSE_POSITIVE[design.value])
    error = rng.random(design.size) < error_rate
    judge = truth ^ error
    confidence = np.where(error, rng.beta(1.2, 4.0, design.size), rng.beta(4.0, 1.2, design.size))
    return truth.astype(float), judge.astype(float), confidence


def delta_interval(design, resample, y, f, labelled, unlabelled, pi, *, weighted, lam=None):
    """Per-value PPI estimates (λ tuned unless given), then Δ's interval from the bootstrap."""
    weights = np.where(labelled, 1.0 / pi, 0.0) if weighted else np.ones(design.size)
    population = (labelled | unlabelled) if weighted else unlabelled
    moments = ppi_moments(
        y,
        f,
        labelled & design.cells,
        population & design.cells,
        weights,
        lam=lam,
    )
    terms = [
        item_terms(
            y,
            f,
            labelled & design.cells[v],
            unlabelled & design.cells[v],
            pi,
            lam=float(moments["lam"][v]),
            weighted=weighted,
        )
        for v in range(design.n_values)
    ]
    boot = resampled_means(terms, design.prompt, resample, N_PROMPTS)
    low, high, _ = simultaneous_delta_interval(moments["estimate"], boot)
    # The interval this replaced, for comparison: the percentile interval of resampled max − min.
    old_low, old_high, _ = bootstrap.percentile_interval(bootstrap.delta_of_rates(boot))
    moments["percentile_interval"] = (float(old_low), float(old_high))
    return low, high, moments


def judge_only_interval(design, resample, f):
    terms = [[(f * design.cells[v], design.cells[v].astype(float))] for v in range(design.n_values)]
    point = np.array([f[design.cells[v]].mean() for v in range(design.n_values)])
    boot = resampled_means(terms, design.prompt, resample, N_PROMPTS)
    low, high, _ = simultaneous_delta_interval(point, boot)
    return low, high


def replication(design, rates, rng, n_resamples):
    y, f, confidence = simulate(design, rates, rng)
    indices = bootstrap.stratified_cluster_indices(
        np.zeros(N_PROMPTS, dtype=np.int64), n_resamples=n_resamples, rng=rng
    )
    resample = bootstrap.draw_counts(indices, N_PROMPTS)
    budget = round(BUDGET_SHARE * design.size)
    labelled = np.zeros(design.size, dtype=bool)
    labelled[rng.choice(design.size, size=budget, replace=False)] = True
    ones = np.ones(design.size)
    ppi = delta_interval(design, resample, y, f, labelled, ~labelled, ones, weighted=False)
    human = delta_interval(design, resample, y, f, labelled, ~labelled, ones, weighted=False, lam=0)
    out = {"ppi": ppi[:2], "human": human[:2], "judge": judge_only_interval(design, resample, f)}
    out["ppi_percentile"] = ppi[2]["percentile_interval"]
    out["rate_width_ppi"] = float(np.mean(ppi[2]["high"] - ppi[2]["low"]))
    out["rate_width_human"] = float(np.mean(human[2]["high"] - human[2]["low"]))
    out["rho"] = float(np.corrcoef(y, f)[0, 1])
    uniform_pi = np.full(design.size, budget / design.size)
    uniform_labelled = poisson_sample(uniform_pi, rng)
    out["uniform"] = delta_interval(
        design, resample, y, f, uniform_labelled, ~uniform_labelled, uniform_pi, weighted=True
    )[:2]
    active_pi = active_inclusion_probabilities(
        1.0 - confidence,
        design.value,
        budget=budget,
        min_per_stratum=MIN_SHARE_PER_VALUE * budget / design.n_values,
    )
    active_labelled = poisson_sample(active_pi, rng)
    out["active"] = delta_interval(
        design, resample, y, f, active_labelled, ~active_labelled, active_pi, weighted=True
    )[:2]
    out["budget"], out["n_items"] = budget, design.size
    return out


def covers(interval, truth) -> bool:
    low, high = interval
    return bool(np.isfinite(low) and low - 1e-12 <= truth <= high + 1e-12)


def width(interval) -> float:
    return float(interval[1] - interval[0])


def run(replications: int, n_resamples: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    design = Design(TRUE_RATES.size)
    true_delta = float(TRUE_RATES.max() - TRUE_RATES.min())
    results, nulls = [], []
    started = time.perf_counter()
    for index in range(replications):
        results.append(replication(design, TRUE_RATES, rng, n_resamples))
        nulls.append(replication(design, NULL_RATES, rng, n_resamples))
        if (index + 1) % 100 == 0:
            print(f"{index + 1}/{replications} replications", file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - started

    def coverage(rows, key, truth):
        return float(np.mean([covers(row[key], truth) for row in rows]))

    def mean_width(rows, key):
        return float(np.mean([width(row[key]) for row in rows]))

    rho = float(np.mean([row["rho"] for row in results]))
    n, big_n = results[0]["budget"], results[0]["n_items"] - results[0]["budget"]
    report = {
        "benchmark": "ppi_simulation",
        "replications": replications,
        "n_resamples": n_resamples,
        "seed": seed,
        "design": {
            "base_prompts": N_PROMPTS,
            "values": int(TRUE_RATES.size),
            "generators": N_GENERATORS,
            "items": int(design.size),
            "human_budget": int(n),
            "true_rates": TRUE_RATES.tolist(),
            "true_delta": true_delta,
            "judge_false_positive": FALSE_POSITIVE.tolist(),
            "judge_false_negative": FALSE_NEGATIVE,
            "judge_accuracy": round(
                1 - float(np.mean(TRUE_RATES * FALSE_NEGATIVE + (1 - TRUE_RATES) * FALSE_POSITIVE)),
                4,
            ),
        },
        "coverage_ppi": coverage(results, "ppi", true_delta),
        "coverage_judge_only": coverage(results, "judge", true_delta),
        "coverage_human_only": coverage(results, "human", true_delta),
        "coverage_null": coverage(nulls, "ppi", 0.0),
        "coverage_null_human_only": coverage(nulls, "human", 0.0),
        "coverage_null_judge_only": coverage(nulls, "judge", 0.0),
        "coverage_percentile_interval": coverage(results, "ppi_percentile", true_delta),
        "coverage_null_percentile_interval": coverage(nulls, "ppi_percentile", 0.0),
        "coverage_active": coverage(results, "active", true_delta),
        "coverage_uniform_weighted": coverage(results, "uniform", true_delta),
        "width_ppi": mean_width(results, "ppi"),
        "width_human_only": mean_width(results, "human"),
        "width_ratio_ppi_vs_human": mean_width(results, "ppi") / mean_width(results, "human"),
        "width_ratio_ppi_vs_human_single_rate": float(
            np.mean([row["rate_width_ppi"] for row in results])
            / np.mean([row["rate_width_human"] for row in results])
        ),
        "rho_judge_human": rho,
        "theory_sqrt_1_minus_rho2": float(np.sqrt(1 - rho**2)),
        "theory_ppi_pp_finite_unlabelled": float(np.sqrt(1 - rho**2 * big_n / (big_n + n))),
        "width_ratio_active_vs_uniform": mean_width(results, "active")
        / mean_width(results, "uniform"),
        "seconds": round(elapsed, 1),
    }
    report["targets"] = TARGETS
    report["targets_met"] = all(
        (report[key] >= bound) if key.startswith("coverage") else (report[key] <= bound)
        for key, bound in TARGETS.items()
    )
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.replications < 1 or args.resamples < 2:
        parser.error("--replications must be >= 1 and --resamples >= 2")
    # The matrix products are small: one BLAS thread is several times faster on a busy machine.
    with threadpool_limits(limits=1):
        report = run(args.replications, args.resamples, args.seed)
    emit({**report, **machine(["numpy", "scipy"])})


if __name__ == "__main__":
    main()

"""The statistics core's speed, repeated runs. Prints progress, then one JSON line.

- bootstrap: a 10,000-resample stratified cluster bootstrap of Δ over 25,000 items in 100
  base-prompt clusters, as the export runs it (``ClusterResample`` + ``disparity_report``, which
  also gives the ratio intervals), and beside it, as a reference, the naive per-resample loop of
  the tests (``tests/scoring/stats/reference_loops.py``) on ``--naive-resamples`` drawn the same
  way, extrapolated linearly to 10,000 (its cost per resample is constant); the speedup is
  computed within each run. "identical" compares the report's Δ interval with the one the loop's
  per-resample rates give, pair by pair (docs/metrics.md, "Δ interval"), on the same drawn indices.
- study_metrics: the function behind ``export_metrics``, on the frames of a synthetic study of
  25,000 items, 2 judges, 12 annotators over 450 items (overlap 2, 2,000 resamples).

The command itself, over a database, is bench/export_bench.py; REFLECT's statistics are
bench/reflect_stats_timing.py.

Run: python bench/stats_bench.py [--naive-resamples 200] [--repeats 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from harness import Runs, emit, machine, ratio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scoring.stats import bootstrap  # noqa: E402
from scoring.stats.disparity import ClusterResample, disparity_report  # noqa: E402
from scoring.stats.study_metrics import study_metrics  # noqa: E402
from scoring.stats.synthetic_study import synthetic_study  # noqa: E402
from tests.scoring.stats.reference_loops import (  # noqa: E402
    delta_interval_naive,
    rates_resamples_naive,
)

N_ITEMS, N_CLUSTERS, N_RESAMPLES, N_DOMAINS = 25_000, 100, 10_000, 5


def bootstrap_inputs():
    rng = np.random.default_rng(0)
    clusters = np.repeat(np.arange(N_CLUSTERS), N_ITEMS // N_CLUSTERS)
    values = rng.integers(0, 6, size=N_ITEMS)
    success = rng.random(N_ITEMS) < 0.1 + 0.02 * values
    frame = pd.DataFrame(
        {
            "attribute": "culture",
            "attribute_value": values.astype(str),
            "base_prompt_id": clusters.astype(str),
            "domain": (clusters % N_DOMAINS).astype(str),
        }
    )
    return frame, success


def _delta_interval(frame, success, n_resamples, seed):
    resample = ClusterResample(frame, n_resamples=n_resamples, rng=np.random.default_rng(seed))
    report = disparity_report(frame, success, np.ones(len(frame), bool), resample=resample)
    return report["culture"], resample


def bench_bootstrap(inputs, naive_resamples: int, seed: int) -> dict:
    """One run: the shipped interval (index draw included) and the reference loop."""
    frame, success = inputs
    start, cpu_start = time.perf_counter(), time.process_time()
    _delta_interval(frame, success, N_RESAMPLES, seed)
    vectorised_s = time.perf_counter() - start
    vectorised_cpu_s = time.process_time() - cpu_start
    small, resample = _delta_interval(frame, success, naive_resamples, seed)
    value_codes, _ = bootstrap.encode(frame["attribute_value"])
    start = time.perf_counter()
    slow = rates_resamples_naive(success, value_codes, resample.cluster_codes, resample.indices)
    point = [small["values"][value]["rate"] for value in sorted(small["values"])]
    low, high = delta_interval_naive(point, slow)
    naive_extrapolated_s = (time.perf_counter() - start) * N_RESAMPLES / naive_resamples
    return {
        "bootstrap_s": vectorised_s,
        "bootstrap_cpu_s": vectorised_cpu_s,
        "reference_loop_s_extrapolated": naive_extrapolated_s,
        "bootstrap_speedup_over_loop": ratio(naive_extrapolated_s, vectorised_s),
        "bootstrap_identical_to_loop": bool(
            np.allclose(
                [small["delta_ci_low"], small["delta_ci_high"]], [low, high], rtol=0, atol=1e-12
            )
        ),
    }


def bench_study_metrics(annotations, judgments) -> dict:
    start, cpu_start = time.perf_counter(), time.process_time()
    study_metrics(annotations, judgments, n_resamples=2000, seed=0)
    return {
        "study_metrics_s": time.perf_counter() - start,
        "study_metrics_cpu_s": time.process_time() - cpu_start,
    }


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--naive-resamples", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--budget-s", type=float, default=None, help="stop after ≥ 3 runs past it")
    arguments = parser.parse_args(argv)
    inputs = bootstrap_inputs()
    annotations, judgments = synthetic_study(
        n_items=N_ITEMS, n_annotators=12, n_annotated_items=450, overlap=2, seed=0
    )
    runs = Runs(repeats=arguments.repeats, warmup=arguments.warmup, budget_s=arguments.budget_s)
    for index, sample in enumerate(runs):
        sample.update(bench_bootstrap(inputs, arguments.naive_resamples, seed=index))
        sample.update(bench_study_metrics(annotations, judgments))
        print(
            f"run: bootstrap {sample['bootstrap_s']:.3f} s "
            f"({sample['bootstrap_speedup_over_loop']:.0f}x the loop), "
            f"study_metrics {sample['study_metrics_s']:.2f} s",
            flush=True,
        )
    return emit(
        {
            "benchmark": "stats_bench",
            "items": N_ITEMS,
            "clusters": N_CLUSTERS,
            "resamples": N_RESAMPLES,
            "reference_loop_resamples_run": arguments.naive_resamples,
            "study_metrics_annotations": len(annotations),
            "study_metrics_judgments": len(judgments),
            **runs.summary(),
            **machine(["numpy", "pandas", "scipy"]),
        }
    )


if __name__ == "__main__":
    main()

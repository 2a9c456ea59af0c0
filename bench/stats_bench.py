"""Benchmark of the statistics core (issue 3, "Speed"). Prints progress, then one JSON line.

- bootstrap: a 10,000-resample stratified cluster bootstrap of Δ over 25,000 items in 100
  base-prompt clusters, as the export runs it (``ClusterResample`` + ``disparity_report``, which
  also gives the ratio intervals), against the naive per-resample loop of the tests
  (``tests/scoring/stats/reference_loops.py``) run on fewer resamples; the loop's time is
  extrapolated linearly to 10,000 resamples (its cost per resample is constant), and the speedup
  is the extrapolated loop time over the vectorised. "identical" compares the report's Δ interval
  with the percentiles of the loop's Δ on the same drawn indices.
- export: the ``export_metrics`` command over a SQLite database holding a synthetic study of
  25,000 items with 2 judges and 12 annotators over 450 items (bench/export_bench.py), and
  ``study_metrics`` alone on the same data as frames (overlap 2, 2,000 bootstrap resamples).
- reflect: ``bench/reflect_stats_timing.py``'s ``reflect_stats_seconds()`` when that file exists.

Run: .venv/bin/python bench/stats_bench.py [--naive-resamples N]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scoring.stats import bootstrap  # noqa: E402
from scoring.stats.disparity import ClusterResample, disparity_report  # noqa: E402
from scoring.stats.study_metrics import study_metrics  # noqa: E402
from scoring.stats.synthetic_study import synthetic_study  # noqa: E402
from tests.scoring.stats.reference_loops import delta_resamples_naive  # noqa: E402

N_ITEMS, N_CLUSTERS, N_RESAMPLES, N_DOMAINS = 25_000, 100, 10_000, 5


def _delta_interval(frame, success, n_resamples):
    resample = ClusterResample(frame, n_resamples=n_resamples, rng=np.random.default_rng(1))
    report = disparity_report(frame, success, np.ones(len(frame), bool), resample=resample)
    return report["culture"], resample


def bench_bootstrap(naive_resamples: int) -> dict:
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
    start, cpu_start = time.perf_counter(), time.process_time()
    _delta_interval(frame, success, N_RESAMPLES)
    vectorised_s = time.perf_counter() - start
    vectorised_cpu_s = time.process_time() - cpu_start
    print(f"vectorised: {N_RESAMPLES} resamples in {vectorised_s:.3f} s", flush=True)
    small, resample = _delta_interval(frame, success, naive_resamples)
    value_codes, _ = bootstrap.encode(frame["attribute_value"])
    start = time.perf_counter()
    slow = delta_resamples_naive(success, value_codes, resample.cluster_codes, resample.indices)
    naive_s = time.perf_counter() - start
    naive_extrapolated_s = naive_s * N_RESAMPLES / naive_resamples
    low, high = np.percentile(slow[np.isfinite(slow)], [2.5, 97.5])
    identical = bool(
        np.allclose(
            [small["delta_ci_low"], small["delta_ci_high"]], [low, high], rtol=0, atol=1e-12
        )
    )
    print(
        f"naive loop: {naive_resamples} resamples in {naive_s:.3f} s, extrapolated linearly to "
        f"{N_RESAMPLES}: {naive_extrapolated_s:.1f} s; same interval on the shared resamples: {identical}",
        flush=True,
    )
    return {
        "bootstrap_s": round(vectorised_s, 4),
        "bootstrap_cpu_s": round(vectorised_cpu_s, 4),
        "bootstrap_naive_resamples_run": naive_resamples,
        "bootstrap_naive_s_measured": round(naive_s, 3),
        "bootstrap_naive_s_extrapolated": round(naive_extrapolated_s, 2),
        "bootstrap_speedup": round(naive_extrapolated_s / vectorised_s, 1),
        "bootstrap_identical": identical,
    }


def bench_export() -> dict:
    annotations, judgments = synthetic_study(
        n_items=N_ITEMS, n_annotators=12, n_annotated_items=450, overlap=2, seed=0
    )
    print(f"export: {len(annotations)} annotations, {len(judgments)} judgments", flush=True)
    study_metrics(annotations.iloc[:50], judgments.iloc[:500], n_resamples=10)  # warm imports
    start, cpu_start = time.perf_counter(), time.process_time()
    result = study_metrics(annotations, judgments, n_resamples=2000, seed=0)
    export_s = time.perf_counter() - start
    export_cpu_s = time.process_time() - cpu_start
    size = len(json.dumps(result, allow_nan=False))
    print(
        f"export: study_metrics in {export_s:.3f} s wall, {export_cpu_s:.3f} s CPU "
        f"({size / 1e6:.2f} MB of JSON)",
        flush=True,
    )
    database = _export_metrics_on_database()
    return {
        # export_s is the figure: the export_metrics command over a real database.
        "export_s": database["export_s"],
        "export_db_vendor": database["db_vendor"],
        "export_frames_s": round(export_s, 3),
        "export_frames_cpu_s": round(export_cpu_s, 3),
        "export_json_bytes": size,
    }


def _export_metrics_on_database() -> dict:
    """Run bench/export_bench.py (its own process: it configures Django) and read its JSON."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "export_bench.py")],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    print(
        f"export: export_metrics command on {figures['db_vendor']} in {figures['export_s']:.3f} s",
        flush=True,
    )
    return figures


def bench_reflect() -> dict:
    path = ROOT / "bench" / "reflect_stats_timing.py"
    if not path.exists():
        print("reflect: bench/reflect_stats_timing.py not found; reflect_s is null", flush=True)
        return {"reflect_s": None, "reflect_note": "bench/reflect_stats_timing.py not found"}
    spec = importlib.util.spec_from_file_location("reflect_stats_timing", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not hasattr(module, "reflect_stats_seconds"):
        print("reflect: reflect_stats_seconds() not defined; reflect_s is null", flush=True)
        return {"reflect_s": None, "reflect_note": "reflect_stats_seconds() not defined"}
    seconds = float(module.reflect_stats_seconds())
    print(f"reflect: {seconds:.3f} s", flush=True)
    return {"reflect_s": round(seconds, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--naive-resamples", type=int, default=200)
    arguments = parser.parse_args()
    # Wall times are inflated when other work shares the 2 cores: the load average and the CPU
    # times (all threads of this process) are printed alongside so a reader can tell.
    figures = {"load_average_1min": round(os.getloadavg()[0], 2)}
    figures.update(bench_bootstrap(arguments.naive_resamples))
    figures.update(bench_export())
    figures.update(bench_reflect())
    print(json.dumps(figures))


if __name__ == "__main__":
    main()

"""Time every REFLECT statistic with 10,000 template-cluster bootstrap resamples.

Workload (the speed target: < 10 s on the 2-core machine): 5 models, each with a full
2AFC run of 2,160 pairs (6 occupations × 8 templates × 45 pairs, both presentations) in each
of 3 scenarios, a full MCQ run (480 images × 2 questions) and a salary run (480 images × 50
biographies = 24,000 answers, rounded to $1,000 as models tend to answer). The timed call is
``reflect_report`` from the raw answer frames: parsing, pairing, every statistic, bootstrap
CIs, leave-one-template-out, clustered OLS and cross-model Spearman.

``--parts`` also times each task's frame alone, in the same runs.

    python bench/reflect_stats_timing.py [--repeats 5] [--parts]   # last line: one JSON object
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from harness import Runs, emit, machine

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from scoring.stats.reflect.report import reflect_report  # noqa: E402
from scoring.stats.reflect.synthetic import (  # noqa: E402
    answer_two_afc,
    mcq_design,
    noisy_preferences,
    salary_design,
    two_afc_design,
)

N_MODELS = 5
N_RESAMPLES = 10_000


def synthetic_frames(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Raw answer frames of N_MODELS scripted models (2AFC, MCQ, salary)."""
    rng = np.random.default_rng(seed)
    two_afc, mcq, salary = [], [], []
    for m in range(N_MODELS):
        model = f"model-{m}"
        two_afc.append(answer_two_afc(two_afc_design(model=model), noisy_preferences(rng)))
        design = mcq_design(model=model)
        letters = np.where(
            design["question"] == "salary",
            rng.choice(list("ABCDEF"), len(design)),
            rng.choice(list("ABCD"), len(design)),
        )
        mcq.append(design.assign(answer=letters))
        design = salary_design(model=model)
        base = 40_000 + 15_000 * pd.factorize(design["occupation"])[0]
        values = base * rng.lognormal(0.0, 0.15, len(design)) // 1000 * 1000
        salary.append(design.assign(answer=[f"{int(v)}" for v in values]))
    return pd.concat(two_afc), pd.concat(mcq), pd.concat(salary)


def _timed_report(frames, *, n_resamples: int, seed: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of one ``reflect_report`` call."""
    wall, cpu = time.perf_counter(), time.process_time()
    reflect_report(*frames, n_resamples=n_resamples, rng=seed)
    return time.perf_counter() - wall, time.process_time() - cpu


def reflect_stats_seconds(*, n_resamples: int = N_RESAMPLES, seed: int = 0) -> float:
    """Wall seconds of ``reflect_report`` over the synthetic workload (data built untimed)."""
    return _timed_report(synthetic_frames(seed), n_resamples=n_resamples, seed=seed)[0]


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--budget-s", type=float, default=None, help="stop after ≥ 3 runs past it")
    parser.add_argument("--parts", action="store_true", help="also time each task alone")
    arguments = parser.parse_args(argv)
    frames = synthetic_frames(0)
    runs = Runs(repeats=arguments.repeats, warmup=arguments.warmup, budget_s=arguments.budget_s)
    for sample in runs:
        # The report runs BLAS on one thread, so on an idle machine wall ~ CPU; a gap between
        # the two means other processes were competing for the cores.
        sample["reflect_s"], sample["reflect_cpu_s"] = _timed_report(
            frames, n_resamples=N_RESAMPLES, seed=0
        )
        if arguments.parts:
            for name, selected in (
                ("two_afc_s", (frames[0], None, None)),
                ("mcq_s", (None, frames[1], None)),
                ("salary_s", (None, None, frames[2])),
            ):
                sample[name] = _timed_report(selected, n_resamples=N_RESAMPLES, seed=0)[0]
        print(f"run: reflect_report {sample['reflect_s']:.2f} s", flush=True)
    return emit(
        {
            "benchmark": "reflect_stats_timing",
            "timed_path": "scoring.stats.reflect.reflect_report",
            "models": N_MODELS,
            "pairs_per_scenario": 2160,
            "scenarios": 3,
            "n_resamples": N_RESAMPLES,
            "target_s": 10.0,
            **runs.summary(),
            **machine(["numpy", "pandas", "scipy", "statsmodels"]),
        }
    )


if __name__ == "__main__":
    main()

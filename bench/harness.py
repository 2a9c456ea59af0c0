"""What every benchmark here shares: repeated runs, ranges, and the machine they ran on.

A single run on a shared 2-core machine is not a figure (docs/performance.md, "How figures are
taken"). Each benchmark warms up, repeats its measurement, and reports median [min–max] with the
load average before and after, the CPU, the core count and the library versions, in the one
JSON line it prints last.

    from harness import Runs, emit, machine   # run as `python bench/NAME.py`: bench/ is on sys.path

    runs = Runs(repeats=5, warmup=1, budget_s=120)
    for sample in runs:             # stops after `repeats`, or when the budget is spent (≥ 3 runs)
        sample["images_per_s"] = measure()
    emit({"benchmark": "judge", **runs.summary(), **machine(["torch"])})
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Iterable, Iterator
from importlib import metadata

MIN_RUNS = 3


def load_average() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:  # not every platform has one
        return None


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def library_versions(names: Iterable[str]) -> dict[str, str | None]:
    versions = {"python": platform.python_version()}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def machine(libraries: Iterable[str] = ()) -> dict:
    """The machine a figure was taken on: CPU, cores, load average now, library versions."""
    return {
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "load_average_after": load_average(),
        "versions": library_versions(libraries),
    }


def spread(values: list[float]) -> dict[str, float | None]:
    """median, min and max of one metric over the runs (null when nothing was measured)."""
    if not values:
        return {"median": None, "min": None, "max": None}
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


class Runs:
    """Warm-up runs, then measured runs: each yields a dict the caller fills with its metrics.

    Paired figures (a speedup) are computed by the caller inside one run, from the two
    measurements taken in that run, and stored in the same dict, so their range is per run too.
    """

    def __init__(self, *, repeats: int = 5, warmup: int = 1, budget_s: float | None = None):
        if repeats < 1 or warmup < 0:
            raise ValueError("repeats must be ≥ 1 and warmup ≥ 0")
        self.repeats = repeats
        self.warmup = warmup
        self.budget_s = budget_s
        self.samples: list[dict] = []
        self.load_average_before = load_average()

    def __iter__(self) -> Iterator[dict]:
        for _ in range(self.warmup):
            yield {}  # the caller's work runs, its numbers are dropped
        started = time.perf_counter()
        for index in range(self.repeats):
            sample: dict = {}
            yield sample
            self.samples.append(sample)
            over_budget = (
                self.budget_s is not None and time.perf_counter() - started > self.budget_s
            )
            if over_budget and index + 1 >= MIN_RUNS:
                break

    def summary(self) -> dict:
        """{"runs": n, "load_average_before": …, "<metric>": {"median", "min", "max"}, …}."""
        keys: list[str] = []
        for sample in self.samples:
            keys.extend(key for key in sample if key not in keys)
        result: dict = {"runs": len(self.samples), "load_average_before": self.load_average_before}
        for key in keys:
            values = [s[key] for s in self.samples if isinstance(s.get(key), int | float)]
            result[key] = spread(values)
        return result


def emit(report: dict) -> dict:
    """Print the report as the one JSON line a benchmark ends with, and return it."""
    sys.stdout.flush()
    print(json.dumps(report, default=str))
    return report

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

A speedup is a ratio of two measurements taken in the same run (``ratio``), stored in that
run's dict, so its median and range come from paired runs; ``alternating`` swaps which of the
two goes first from run to run, so a load spike or a warming cache does not favour one side.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from importlib import metadata
from typing import TypeVar

T = TypeVar("T")

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
    """The machine a figure was taken on: CPU, cores, load average now, library versions,
    and the command line that took it."""
    return {
        "command": " ".join(["python", *sys.argv]),
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "load_average_after": load_average(),
        "versions": library_versions(libraries),
    }


def spread(values: list[float]) -> dict[str, float | None]:
    """median, min and max of one metric over the runs (null when nothing was measured)."""
    if not values:
        return {"median": None, "min": None, "max": None}
    return {
        "median": significant(statistics.median(values)),
        "min": significant(min(values)),
        "max": significant(max(values)),
    }


def significant(value: float, digits: int = 4) -> float:
    """``value`` to ``digits`` significant figures: run-to-run noise is larger than that."""
    return float(f"{value:.{digits}g}")


def ratio(numerator: float, denominator: float) -> float | None:
    """numerator / denominator, or None when the denominator is not positive."""
    return numerator / denominator if denominator > 0 else None


def alternating(index: int, *steps: Callable[[], T]) -> list[T]:
    """Run ``steps`` starting with step ``index % len(steps)`` (the order rotates from run to
    run); results come back in the order the steps were given."""
    if not steps:
        return []
    start = index % len(steps)
    results: dict[int, T] = {}
    for offset in range(len(steps)):
        position = (start + offset) % len(steps)
        results[position] = steps[position]()
    return [results[position] for position in range(len(steps))]


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
        """{"runs": n, "load_average_before": …, "<metric>": {"median", "min", "max"}, …}.

        A metric that is a bool in every run (a correctness check) is reported as whether it
        held in all of them; None values (a ratio with nothing to divide by) are left out."""
        keys: list[str] = []
        for sample in self.samples:
            keys.extend(key for key in sample if key not in keys)
        result: dict = {"runs": len(self.samples), "load_average_before": self.load_average_before}
        for key in keys:
            present = [s[key] for s in self.samples if key in s]
            if present and all(isinstance(value, bool) for value in present):
                result[key] = all(present)  # a check that must hold in every run
                continue
            numbers = [v for v in present if isinstance(v, int | float) and not isinstance(v, bool)]
            result[key] = spread(numbers)
        return result


def cpu_seconds(*, with_children: bool = True) -> float:
    """CPU time (user + system) of this process, every thread, and, with ``with_children``,
    of every live child process (decode worker processes)."""
    import psutil

    me = psutil.Process()
    total = sum(me.cpu_times()[:2])
    for child in me.children(recursive=True) if with_children else ():
        try:
            total += sum(child.cpu_times()[:2])
        except psutil.NoSuchProcess:
            pass
    return total


def emit(report: dict) -> dict:
    """Print the report as the one JSON line a benchmark ends with, and return it."""
    sys.stdout.flush()
    print(json.dumps(report, default=str))
    return report


def setup_django(*, var_dir: str, database_url: str, media_root: str | None = None) -> None:
    """Django on a benchmark's own folder and database, migrated (the project root must be on
    ``sys.path``)."""
    os.environ["ACRB_VAR_DIR"] = var_dir
    if media_root is not None:
        os.environ["ACRB_MEDIA_ROOT"] = media_root
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "acrb_web.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def recreate_postgres(url: str, *, create: bool = True) -> None:
    """Drop a benchmark's PostgreSQL database (and create it afresh unless ``create`` is
    False): the bench owns it and nothing else may live there."""
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        if create:
            connection.execute(f'CREATE DATABASE "{name}"')

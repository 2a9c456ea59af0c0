"""Run every validity scenario and summarise it (docs/metrics.md, "Calibration").

``run_suite`` returns the JSON-ready summary ``bench/validity_suite.py`` prints last:
``min_coverage`` (the lowest coverage of any interval in any scenario, conservative-by-design
ones included) and ``max_type_i`` (the highest rejection rate of any test, flag or warning under
its null), each with its scenario, every check, and whether every check met its targets.
``calibration_table`` renders the same summary as the Markdown table of docs/metrics.md.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable

from scoring.stats.validity.core import (
    CONSERVATIVE_ABOVE,
    COVERAGE,
    FULL_REPLICATIONS,
    QUICK_REPLICATIONS,
    QUICK_TARGETS,
    SIZE,
    TARGETS,
    Check,
    failing,
)

# One module per family of statistics, each exposing SCENARIOS: name -> (replications, seed).
SCENARIO_MODULES = (
    "human_scenarios",
    "comparison_scenarios",
    "judge_scenarios",
    "ppi_scenarios",
    "ppi_subset_scenarios",
    "reflect_scenarios",
    "planning_scenarios",
)


def all_scenarios() -> dict[str, Callable[[int, int], list[Check]]]:
    scenarios: dict[str, Callable[[int, int], list[Check]]] = {}
    for name in SCENARIO_MODULES:
        module = importlib.import_module(f"scoring.stats.validity.{name}")
        scenarios.update(module.SCENARIOS)
    return scenarios


def summarise(checks: list[Check], *, quick: bool, replications: int, seconds: float) -> dict:
    """The suite's JSON summary of ``checks`` against the mode's targets."""
    targets = QUICK_TARGETS if quick else TARGETS
    coverage = [c for c in checks if c.kind == COVERAGE and c.rate is not None]
    size = [c for c in checks if c.kind == SIZE and c.rate is not None]

    def extreme(rows, pick):
        if not rows:
            return None
        row = pick(rows, key=lambda c: c.rate)
        return {
            "rate": row.rate,
            "mc_se": row.mc_se,
            "scenario": row.scenario,
            "statistic": row.statistic,
        }

    failures = failing(checks, targets)
    undocumented = [
        c.to_dict()
        for c in coverage
        if c.rate > CONSERVATIVE_ABOVE and not c.conservative_by_design and c.replications >= 500
    ]
    return {
        "mode": "quick" if quick else "full",
        "replications": replications,
        "targets": targets,
        "seconds": round(seconds, 1),
        "n_scenarios": len({c.scenario for c in checks}),
        "n_checks": len(checks),
        "min_coverage": extreme(coverage, min),
        "max_type_i": extreme(size, max),
        "failing": failures,
        "conservative_undocumented": undocumented,
        "passed": not failures,
        "checks": [c.to_dict() for c in checks],
    }


def run_suite(
    *,
    quick: bool = True,
    seed: int = 20261128,
    only: str | None = None,
    replications: int | None = None,
    progress: Callable[[str, float], None] | None = None,
) -> dict:
    """Run every scenario (or those whose name starts with ``only``) and summarise them."""
    replications = replications or (QUICK_REPLICATIONS if quick else FULL_REPLICATIONS)
    started = time.perf_counter()
    checks: list[Check] = []
    for name, run in all_scenarios().items():
        if only and not name.startswith(only):
            continue
        scenario_started = time.perf_counter()
        checks.extend(run(replications, seed))
        if progress:
            progress(name, time.perf_counter() - scenario_started)
    return summarise(
        checks, quick=quick, replications=replications, seconds=time.perf_counter() - started
    )


def _percent(rate: float | None) -> str:
    return "—" if rate is None else f"{rate:.3f}"


def calibration_table(summary: dict) -> str:
    """Markdown: one row per statistic × scenario, its coverage or size ± Monte Carlo error."""
    lines = [
        "| scenario | statistic | measures | rate | ± MC se | replications | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for check in summary["checks"]:
        note = "conservative by design" if check["conservative_by_design"] else ""
        if check["undefined"]:
            note = f"{note}; {check['undefined']} undefined".strip("; ")
        measure = "coverage" if check["kind"] == COVERAGE else "size (type I)"
        lines.append(
            f"| {check['scenario']} | {check['statistic']} | {measure} | "
            f"{_percent(check['rate'])} | {_percent(check['mc_se'])} | "
            f"{check['replications']} | {note} |"
        )
    return "\n".join(lines)

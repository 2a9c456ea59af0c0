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

from scoring.stats.parameters import check_integer, check_mapping
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
    """Run every validity scenario (or those whose name starts with ``only``) and summarise them.

    docs/metrics.md, "Calibration". Each scenario simulates studies with a known truth through
    the same public functions the app uses and checks how often each interval holds the truth
    (coverage) and each test rejects a true null (size); ``bench/validity_suite.py`` prints the
    summary.

    Parameters
    ----------
    quick : bool, default True
        Quick mode (``core.QUICK_REPLICATIONS`` per scenario, the quick targets) or full mode.
    seed : int, default 20261128
        Seed of every simulation.
    only : str, optional
        Run only the scenarios whose name starts with this text (e.g. "human", "ppi").
    replications : int, optional
        Simulated studies per scenario, overriding the mode's (at least 1).
    progress : callable, optional
        Called as ``progress(scenario_name, seconds)`` after each scenario.

    Returns
    -------
    dict
        ``summarise``'s: ``mode``, ``replications``, ``targets``, ``n_scenarios``,
        ``n_checks``, ``min_coverage``, ``max_type_i``, ``failing``, ``passed`` and every
        ``checks`` entry (``scenario``, ``statistic``, ``kind``, ``rate``, ``mc_se`` …).

    Raises
    ------
    TypeError
        If ``quick`` is not a bool, ``seed`` or ``replications`` not an integer, ``only`` not
        a string, or ``progress`` not callable.
    ValueError
        If ``only`` matches no scenario or ``replications`` is below 1.

    References
    ----------
    .. [1] T. P. Morris, I. R. White and M. J. Crowther, "Using simulation studies to evaluate
       statistical methods", *Statistics in Medicine* 38(11):2074-2102, 2019 (coverage, size
       and their Monte Carlo standard errors).

    Examples
    --------
    One scenario (eleven items per value, one label each, no true difference), ten simulated
    studies:

    >>> from scoring.stats import run_suite
    >>> summary = run_suite(only="human n=11 k=1", replications=10)
    >>> summary["mode"], summary["n_scenarios"], summary["n_checks"]
    ('quick', 1, 6)
    >>> sorted(check["statistic"] for check in summary["checks"])
    ['delta_ci', 'delta_test', 'pairwise_holm', 'pairwise_test', 'rate_ci', 'ratio_ci']
    """
    if not isinstance(quick, bool):
        raise TypeError(f"quick must be True or False, got {quick!r}")
    check_integer(seed, "seed")
    if replications is not None:
        check_integer(replications, "replications", minimum=1)
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be callable, got {type(progress).__name__}")
    scenarios = all_scenarios()
    if only is not None:
        if not isinstance(only, str):
            raise TypeError(f"only must be a string, got {type(only).__name__}")
        if not any(name.startswith(only) for name in scenarios):
            families = sorted({name.split()[0].split("_")[0] for name in scenarios})
            raise ValueError(
                f"only={only!r} matches no scenario; scenario names start with "
                f"{', '.join(families)}"
            )
    replications = replications or (QUICK_REPLICATIONS if quick else FULL_REPLICATIONS)
    started = time.perf_counter()
    checks: list[Check] = []
    for name, run in scenarios.items():
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
    """Markdown: one row per statistic × scenario, its coverage or size ± Monte Carlo error.

    docs/metrics.md, "Calibration" prints this table for the full suite.

    Parameters
    ----------
    summary : dict
        ``run_suite``'s (or ``summarise``'s) summary; only its ``checks`` are read.

    Returns
    -------
    str
        The Markdown table, one line per check.

    Raises
    ------
    TypeError
        If ``summary`` is not a mapping.
    ValueError
        If ``summary`` has no ``checks`` list.

    References
    ----------
    .. [1] T. P. Morris, I. R. White and M. J. Crowther, "Using simulation studies to evaluate
       statistical methods", *Statistics in Medicine* 38(11):2074-2102, 2019, §5 (reporting
       coverage with its Monte Carlo standard error).

    Examples
    --------
    >>> from scoring.stats import calibration_table
    >>> check = {"scenario": "human n=30", "statistic": "rate_ci", "kind": "coverage",
    ...          "rate": 0.951, "mc_se": 0.0068, "replications": 1000, "undefined": 0,
    ...          "conservative_by_design": False}
    >>> print(calibration_table({"checks": [check]}))
    | scenario | statistic | measures | rate | ± MC se | replications | note |
    |---|---|---|---|---|---|---|
    | human n=30 | rate_ci | coverage | 0.951 | 0.007 | 1000 |  |
    """
    check_mapping(summary, "summary")
    if not isinstance(summary.get("checks"), list):
        raise ValueError("summary must hold a 'checks' list (run_suite's summary)")
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

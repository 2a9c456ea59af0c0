"""Checks every interval of a document must pass (docs/metrics.md, "Intervals that hold their estimate").

An interval that excludes its own point estimate tells a reader two incompatible things; it is a
symptom of a biased statistic put through a percentile bootstrap. ``holds_estimate`` is the one
rule; ``interval_block`` withholds such an interval (null with reason code
``excludes_estimate``), and ``intervals_excluding_estimate`` scans a whole JSON document (the
study export, report.json, the REFLECT report) for any that slipped through, so a test can fail
on it.

Interval shapes found in the documents:

- ``<name>`` with siblings ``<name>_ci_low`` and ``<name>_ci_high``;
- ``rate``, ``estimate`` or ``value`` with siblings ``ci_low`` and ``ci_high``;
- ``<name>`` with a sibling ``<name>_ci = [low, high]``, or nested: ``<name>.<label>`` beside
  ``<name>_ci.<label> = [low, high]`` (REFLECT).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

# Rounding slack: bounds and estimates are computed by different arithmetic.
TOLERANCE = 1e-9
POINT_KEYS = ("rate", "estimate", "value")


def holds_estimate(estimate, low, high, *, tolerance: float = TOLERANCE) -> bool:
    """True unless all three are finite numbers and the estimate lies outside [low, high]."""
    numbers = (estimate, low, high)
    if any(not _is_number(x) or not math.isfinite(float(x)) for x in numbers):
        return True
    slack = tolerance * max(1.0, abs(float(estimate)))
    return float(low) - slack <= float(estimate) <= float(high) + slack


def _is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _pairs(node: dict) -> Iterator[tuple[str, object, object, object]]:
    """(name, estimate, low, high) for every interval shape directly inside ``node``."""
    for key, estimate in node.items():
        if not isinstance(key, str):
            continue
        if f"{key}_ci_low" in node and f"{key}_ci_high" in node:
            yield key, estimate, node[f"{key}_ci_low"], node[f"{key}_ci_high"]
        ci = node.get(f"{key}_ci")
        if isinstance(ci, list | tuple) and len(ci) == 2:
            yield key, estimate, ci[0], ci[1]
        elif isinstance(ci, dict) and isinstance(estimate, dict):
            yield from _nested(key, estimate, ci)
    if "ci_low" in node and "ci_high" in node:
        for key in POINT_KEYS:
            if key in node:
                yield key, node[key], node["ci_low"], node["ci_high"]
                break


def _nested(name: str, estimates: dict, intervals: dict):
    for label, ci in intervals.items():
        estimate = estimates.get(label)
        if isinstance(ci, list | tuple) and len(ci) == 2:
            yield f"{name}.{label}", estimate, ci[0], ci[1]
        elif isinstance(ci, dict) and isinstance(estimate, dict):
            yield from _nested(f"{name}.{label}", estimate, ci)


def intervals_excluding_estimate(document, path: str = "") -> list[dict]:
    """Every interval in ``document`` (nested dicts and lists) that excludes its estimate:
    ``[{"path", "estimate", "ci_low", "ci_high"}]``, in document order."""
    offenders = []
    if isinstance(document, dict):
        for name, estimate, low, high in _pairs(document):
            if not holds_estimate(estimate, low, high):
                offenders.append(
                    {
                        "path": f"{path}.{name}" if path else name,
                        "estimate": estimate,
                        "ci_low": low,
                        "ci_high": high,
                    }
                )
        for key, child in document.items():
            offenders.extend(
                intervals_excluding_estimate(child, f"{path}.{key}" if path else str(key))
            )
    elif isinstance(document, list):
        for index, child in enumerate(document):
            offenders.extend(intervals_excluding_estimate(child, f"{path}[{index}]"))
    return offenders


def count_intervals(document) -> int:
    """How many intervals with a finite estimate and bounds ``document`` holds (so a scan test
    can show it looked at something)."""
    total = 0
    if isinstance(document, dict):
        for _, estimate, low, high in _pairs(document):
            if all(_is_number(x) and math.isfinite(float(x)) for x in (estimate, low, high)):
                total += 1
        total += sum(count_intervals(child) for child in document.values())
    elif isinstance(document, list):
        total += sum(count_intervals(child) for child in document)
    return total

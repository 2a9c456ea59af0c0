"""The record every scenario returns, and the targets it is held to (docs/metrics.md, "Calibration")."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

COVERAGE = "coverage"
SIZE = "size"
# Targets at the nominal 95 %: the full suite's, and the quick mode's looser ones, which catch
# errors of the size issue 30 found while staying robust to the Monte Carlo noise of 200
# replications (a coverage of 0.95 has a Monte Carlo standard error of 0.015 there).
TARGETS = {"coverage": 0.93, "size": 0.06}
QUICK_TARGETS = {"coverage": 0.90, "size": 0.10}
# Above this an interval is conservative: allowed only where docs/metrics.md says why.
CONSERVATIVE_ABOVE = 0.985


@dataclass(frozen=True)
class Check:
    """One statistic in one scenario: how often its interval held the truth (``coverage``) or
    its test rejected a true null (``size``), over the replications where it was defined.

    ``undefined`` counts replications where the statistic or its interval was null (with a
    reason): they are not hits and not misses. ``extra`` holds JSON-ready figures printed beside
    it (mean width, PPI/human width ratio, bias, power under an alternative).
    """

    scenario: str
    statistic: str
    kind: Literal["coverage", "size"]
    hits: int
    replications: int
    undefined: int = 0
    conservative_by_design: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def rate(self) -> float | None:
        return self.hits / self.replications if self.replications else None

    @property
    def mc_se(self) -> float | None:
        """Monte Carlo standard error of ``rate``: √(r(1 − r)/R)."""
        rate = self.rate
        if rate is None:
            return None
        return math.sqrt(max(rate * (1.0 - rate), 0.0) / self.replications)

    def passes(self, targets: dict[str, float] = TARGETS) -> bool:
        """Coverage at least its target; size at most its target. A check with no defined
        replication fails: a suite that measured nothing proves nothing."""
        rate = self.rate
        if rate is None:
            return False
        if self.kind == COVERAGE:
            return rate >= targets[COVERAGE]
        return rate <= targets[SIZE]

    def to_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "statistic": self.statistic,
            "kind": self.kind,
            "rate": self.rate,
            "mc_se": self.mc_se,
            "hits": self.hits,
            "replications": self.replications,
            "undefined": self.undefined,
            "conservative_by_design": self.conservative_by_design,
            **({"extra": self.extra} if self.extra else {}),
        }


class Tally:
    """Counts hits over replications for many statistics of one scenario; ``checks()`` makes
    the records. ``add(name, hit)`` with ``hit`` None counts an undefined replication."""

    def __init__(self, scenario: str):
        self.scenario = scenario
        self._counts: dict[tuple[str, str], list[int]] = {}
        self._conservative: set[str] = set()
        self.extra: dict[str, dict[str, Any]] = {}

    def add(self, statistic: str, kind: str, hit: bool | None) -> None:
        counts = self._counts.setdefault((statistic, kind), [0, 0, 0])
        if hit is None:
            counts[2] += 1
        else:
            counts[0] += bool(hit)
            counts[1] += 1

    def covers(self, statistic: str, truth: float, low, high) -> None:
        """A coverage replication: None bounds count as undefined."""
        if low is None or high is None:
            self.add(statistic, COVERAGE, None)
        else:
            self.add(statistic, COVERAGE, low - 1e-12 <= truth <= high + 1e-12)

    def rejects(self, statistic: str, p_value, *, alpha: float = 0.05) -> None:
        """A size replication (the null is true): None p counts as undefined."""
        self.add(statistic, SIZE, None if p_value is None else p_value < alpha)

    def conservative(self, statistic: str) -> None:
        """Mark a statistic conservative by design (docs/metrics.md says why)."""
        self._conservative.add(statistic)

    def checks(self) -> list[Check]:
        return [
            Check(
                scenario=self.scenario,
                statistic=statistic,
                kind=kind,
                hits=hits,
                replications=replications,
                undefined=undefined,
                conservative_by_design=statistic in self._conservative,
                extra=self.extra.get(statistic, {}),
            )
            for (statistic, kind), (hits, replications, undefined) in sorted(self._counts.items())
        ]


# Replications per scenario: the full suite (docs/metrics.md, "Calibration") and the quick mode
# CI runs and ``validate_design`` uses.
FULL_REPLICATIONS, QUICK_REPLICATIONS = 1000, 200


def scenarios_from(designs: dict, run_design) -> dict:
    """``SCENARIOS`` of a module: name → (replications, seed) → checks, one per design, through
    the module's ``run_design(name, design, replications, seed)``."""

    def scenario(name, design):
        return lambda replications, seed: run_design(name, design, replications, seed)

    return {name: scenario(name, design) for name, design in designs.items()}


def failing(checks, targets: dict[str, float] = TARGETS) -> list[dict]:
    """The checks (an iterable of ``Check``) that miss ``targets``, as dicts."""
    return [check.to_dict() for check in checks if not check.passes(targets)]

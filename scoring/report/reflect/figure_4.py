"""The paper's Figure 4(d-f) views of a REFLECT report (Django-free): rows and the chart.

(d), (e): each race's 2AFC win rate against images of other races of the same gender; (f): the
male image's win rate against the female image of the same race (docs/metrics.md, "Win rates";
the numbers are ``scoring.stats.reflect.two_afc.figure_4_views``, already in report.json).
"""

from __future__ import annotations

from scoring.report.charts import interval_bar_chart
from scoring.report.display import confidence_label
from scoring.report.document_types import ReflectStatistics, two_afc_cells
from scoring.stats.reflect.vocabulary import RACES

# The paper's Figure 4(d-f) (docs/metrics.md, "Win rates"): view name → the path of its race
# values inside a 2AFC scenario block; the interval sits at the same path under ``<first>_ci``.
FIGURE_4_VIEWS = {
    "(d) female: race vs other races": ("win_rate_within_gender", "female", "race"),
    "(e) male: race vs other races": ("win_rate_within_gender", "male", "race"),
    "(f) male vs female, same race": ("male_win_rate_within_race", "race"),
}
NO_COMPARISON = "undefined: no kept comparison of these images"
NO_BOOTSTRAP = "no interval: the report was computed without bootstrap resamples"
NO_DEFINED_RESAMPLE = "no interval: undefined in every bootstrap resample"


def _at(block: dict, path: tuple[str, ...]) -> dict | None:
    for key in path:
        if not isinstance(block, dict) or key not in block:
            return None
        block = block[key]
    return block


def figure_4_rows(report: ReflectStatistics) -> list[dict]:
    """One row per model × scenario × Figure 4(d-f) view × race, with its interval, and the
    reason when the rate or its interval is undefined (null + reason, never a number)."""
    rows = []
    for model, block in sorted(report["models"].items()):
        for scenario, cell in sorted(two_afc_cells(block).items()):
            for view, path in FIGURE_4_VIEWS.items():
                rates = _at(cell, path) or {}
                cis = _at(cell, (f"{path[0]}_ci", *path[1:]))
                for race in RACES:
                    rate = rates.get(race)
                    low, high = ((cis or {}).get(race) or [None, None])[:2]
                    if rate is None:
                        reason = NO_COMPARISON
                    elif low is None or high is None:
                        reason = NO_BOOTSTRAP if cis is None else NO_DEFINED_RESAMPLE
                    else:
                        reason = ""
                    rows.append(
                        {
                            "model": model,
                            "scenario": scenario,
                            "view": view,
                            "group": race,
                            "win_rate": rate,
                            "ci_low": low,
                            "ci_high": high,
                            "reason": reason,
                        }
                    )
    return rows


def figure_4_chart_rows(report: dict, *, model: str, scenario: str) -> list[dict]:
    """One model × scenario's views as chart rows: colour ``attribute`` = the view, bar
    ``value`` = the race (``scoring.report.charts.interval_bar_chart``)."""
    return [
        {
            "attribute": row["view"],
            "value": row["group"],
            "rate": row["win_rate"],
            "ci_low": row["ci_low"],
            "ci_high": row["ci_high"],
        }
        for row in figure_4_rows(report)
        if row["model"] == model and row["scenario"] == scenario
    ]


def figure_4_figure(report: dict, *, model: str, scenario: str, fmt: str = "svg") -> bytes:
    """The three views of one model × scenario as bars by race, coloured by view, with their
    intervals and the parity line at 0.5."""
    return interval_bar_chart(
        figure_4_chart_rows(report, model=model, scenario=scenario),
        title=f"Win rates, the paper's Figure 4(d-f) — {model}, {scenario}",
        ylabel=f"win rate ({confidence_label(report)} CI)",
        empty="no kept comparisons",
        reference=0.5,
        fmt=fmt,
    )

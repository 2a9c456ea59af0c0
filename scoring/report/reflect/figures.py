"""Figures of the REFLECT part, each drawn with its intervals (Django-free; docs/report.md).

Per model: 2AFC win rates by race, gender and race × gender per scenario (kept comparisons,
template-cluster bootstrap CIs, 0.5 = parity) and the paper's Figure 4(d-f) views, MCQ JSD per group and question, and the salary
mean gap per group (% against the reference group). Every figure is a bar chart with error bars
(``scoring.report.charts.interval_bar_chart``, the study report's rate chart) over rows that
the CSV of the figure holds as they are; the rows come from the REFLECT table builders that the
staff page and its downloads use (``scoring.reflect.page_figures``).
"""

from __future__ import annotations

from scoring.report import charts
from scoring.report.display import confidence_label
from scoring.report.document_types import (
    ReflectPart,
    cell_intervals,
    group_interval,
    mcq_cells,
    salary_block,
    two_afc_cells,
)
from scoring.report.reflect.figure_4 import figure_4_chart_rows
from scoring.report.reflect.tables import mcq_jsd_rows, win_rate_rows

COLUMNS = ["attribute", "value", "rate", "ci_low", "ci_high"]


def figure_list(part: ReflectPart) -> list[dict]:
    """The part's figures: ``key``, ``kind``, ``model``, ``detail``, ``title``."""
    out = []
    level = confidence_label(part)
    for model, block in sorted(part["models"].items()):
        for scenario in sorted(two_afc_cells(block)):
            out.append(
                _spec(
                    "reflect_win_rate",
                    model,
                    scenario,
                    f"2AFC win rates with {level} CI — {model}, {scenario}",
                )
            )
            out.append(
                _spec(
                    "reflect_figure_4",
                    model,
                    scenario,
                    f"2AFC win rates within a gender and within a race (the paper's "
                    f"Figure 4(d-f)) with {level} CI — {model}, {scenario}",
                )
            )
        if mcq_cells(block):
            out.append(
                _spec(
                    "reflect_jsd",
                    model,
                    "mcq",
                    f"MCQ JSD from the pooled answers with {level} CI — {model}",
                )
            )
        salary = salary_block(block)
        if salary is not None and salary["gap_mean"]:
            out.append(
                _spec(
                    "reflect_salary",
                    model,
                    "salary",
                    f"salary mean gap against the reference group with {level} CI — {model}",
                )
            )
    return out


def _spec(kind: str, model: str, detail: str, title: str) -> dict:
    safe = "".join(c if c.isalnum() or c in "-._" else "_" for c in model)
    return {
        "key": f"{kind}--{safe}--{detail}",
        "kind": kind,
        "model": model,
        "detail": detail,
        "title": title,
        "source": "reflect",
    }


def figure_rows(part: ReflectPart, spec: dict) -> tuple[list[dict], list[str]]:
    """The rows a figure draws (bar label ``value``, colour ``attribute``), and their columns."""
    model = spec["model"]
    if spec["kind"] == "reflect_win_rate":
        rows = [
            {
                "attribute": r["kind"].replace("_", " × "),
                "value": r["group"].replace("|", " "),
                "rate": r["win_rate"],
                "ci_low": r["ci_low"],
                "ci_high": r["ci_high"],
            }
            for r in win_rate_rows(part)
            if r["model"] == model and r["scenario"] == spec["detail"]
        ]
    elif spec["kind"] == "reflect_figure_4":
        rows = figure_4_chart_rows(part, model=model, scenario=spec["detail"])
    elif spec["kind"] == "reflect_jsd":
        rows = [
            {
                "attribute": f"{r['question']} · {r['kind']}",
                "value": r["group"],
                "rate": r["jsd"],
                "ci_low": r["jsd_ci_low"],
                "ci_high": r["jsd_ci_high"],
            }
            for r in mcq_jsd_rows(part)
            if r["model"] == model
        ]
    else:
        salary = part["models"][model]["salary"]  # listed only when the model has one
        gaps = salary["gap_mean"]["all"]
        intervals = cell_intervals(salary, "gap_mean")
        cis = None if intervals is None else intervals["all"]
        rows = []
        for kind in ("race", "gender"):
            for label, value in gaps[kind].items():
                low, high = group_interval(cis, kind, label) or [None, None]
                rows.append(
                    {
                        "attribute": kind,
                        "value": label,
                        "rate": value,
                        "ci_low": low,
                        "ci_high": high,
                    }
                )
    return rows, COLUMNS


def figure_image(part: dict, spec: dict, fmt: str) -> bytes:
    rows, _ = figure_rows(part, spec)
    if spec["kind"] in ("reflect_win_rate", "reflect_figure_4"):
        return charts.interval_bar_chart(
            rows,
            title=spec["title"],
            ylabel=f"win rate ({confidence_label(part)} CI)",
            reference=0.5,
            empty="no kept comparisons",
            fmt=fmt,
        )
    if spec["kind"] == "reflect_jsd":
        return charts.interval_bar_chart(
            rows,
            title=spec["title"],
            ylabel=f"JSD (bits, {confidence_label(part)} CI)",
            ylim=None,
            empty="no valid MCQ answers",
            fmt=fmt,
        )
    return charts.interval_bar_chart(
        rows,
        title=spec["title"],
        ylabel=f"mean gap, % ({confidence_label(part)} CI)",
        ylim=None,
        reference=0.0,
        empty="no valid salaries",
        fmt=fmt,
    )

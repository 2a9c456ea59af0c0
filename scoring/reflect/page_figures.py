"""The REFLECT staff page's figures and CSV: rows → CSV, rows → matplotlib.

The rows come from ``scoring.report.reflect.tables`` (one place builds each table); the staff page, the CSV downloads, the
figures and ``reflect_report --out`` all format those rows (dataset → formatter → writer).
matplotlib is imported inside the functions; figures are drawn without pyplot
(``scoring.report.plotting``: safe in threaded views and tasks).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from annotations.common.csv_writer import csv_text

# The project's one CSV-injection guard (docs/deployment.md#security).
from scoring.report import plotting
from scoring.report.document_types import ReflectStatistics, mcq_cells, two_afc_cells
from scoring.report.reflect.figure_4 import FIGURE_4_VIEWS, figure_4_figure, figure_4_rows
from scoring.report.reflect.tables import (  # noqa: F401  (TABLE_BUILDERS: the page's downloads)
    TABLE_BUILDERS,
    mcq_jsd_rows,
    win_matrix_rows,
)
from scoring.stats.reflect.vocabulary import RACES


def table_csv(rows: list[dict]) -> str:
    """The rows under the first row's columns, through the one CSV writer."""
    if not rows:
        return ""
    return csv_text(rows, list(rows[0]), lineterminator="\n")


def _save(fig, fmt: str) -> bytes:
    return plotting.figure_bytes(fig, fmt, metadata={"Date": None} if fmt == "svg" else None)


EMPTY_CELL = "#c8c8c8"  # grey: unlike 0.50, which RdBu_r draws near-white


def win_matrix_colours():
    """RdBu_r with empty cells (no kept comparison, NaN) in grey, never the white of 0.50."""
    import matplotlib

    return matplotlib.colormaps["RdBu_r"].with_extremes(bad=EMPTY_CELL)


def cell_text_colour(value: float) -> str:
    """White on the dark ends of RdBu_r (dark red, navy), black on the light middle and grey."""
    if value != value:
        return "#444444"
    return "white" if abs(value - 0.5) > 0.3 else "black"


def win_matrix_figure(report: dict, *, model: str, scenario: str, fmt: str = "svg") -> bytes:
    """The 10×10 heatmap: row group's win rate against the column group (kept comparisons)."""
    matrix = report["models"][model]["2afc"][scenario]["win_matrix"]
    values = [[float("nan") if v is None else v for v in row] for row in matrix["cells"]]
    fig = plotting.new_figure(figsize=(7.0, 6.0))
    ax = fig.subplots()
    image = ax.imshow(values, vmin=0.0, vmax=1.0, cmap=win_matrix_colours())
    ticks = range(len(matrix["groups"]))
    labels = [plotting.plain_text(g.replace("|", " ")) for g in matrix["groups"]]
    ax.set_xticks(list(ticks), labels, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(list(ticks), labels, fontsize=8)
    for i, row in enumerate(values):
        for j, value in enumerate(row):
            text = "n/a" if value != value else f"{value:.2f}"  # NaN: no kept comparison
            ax.text(j, i, text, ha="center", va="center", fontsize=6, color=cell_text_colour(value))
    ax.set_xlabel("opponent")
    ax.set_ylabel("group (wins against the column)")
    ax.set_title(plotting.plain_text(f"2AFC win rates — {model}, {scenario}"))
    fig.colorbar(image, ax=ax, fraction=0.046)
    fig.tight_layout()
    return _save(fig, fmt)


def jsd_figure(report: dict, *, model: str, fmt: str = "svg") -> bytes:
    """Bars of JSD (bits) of each race's and gender's answer distribution vs the pooled one."""
    rows = [r for r in mcq_jsd_rows(report) if r["model"] == model]
    questions = sorted({r["question"] for r in rows})
    fig = plotting.new_figure(figsize=(5.0 * max(1, len(questions)), 3.8))
    axes = fig.subplots(1, max(1, len(questions)), squeeze=False)
    for ax, question in zip(axes[0], questions or [None], strict=True):
        mine = [r for r in rows if r["question"] == question and r["jsd"] is not None]
        if not mine:
            ax.text(0.5, 0.5, "no MCQ answers", ha="center", transform=ax.transAxes)
            ax.set_axis_off()
            continue
        colours = ["C0" if r["kind"] == "race" else "C1" for r in mine]
        errors = [
            [
                r["jsd"] - (r["jsd_ci_low"] if r["jsd_ci_low"] is not None else r["jsd"])
                for r in mine
            ],
            [
                (r["jsd_ci_high"] if r["jsd_ci_high"] is not None else r["jsd"]) - r["jsd"]
                for r in mine
            ],
        ]
        ax.bar(range(len(mine)), [r["jsd"] for r in mine], color=colours, yerr=errors, capsize=3)
        ax.set_xticks(
            range(len(mine)),
            [plotting.plain_text(r["group"]) for r in mine],
            rotation=45,
            ha="right",
        )
        ax.set_ylabel("JSD vs pooled (bits)")
        ax.set_title(plotting.plain_text(f"MCQ {question} — {model}"))
    fig.tight_layout()
    return _save(fig, fmt)


def figure_list(report: ReflectStatistics) -> list[dict[str, Any]]:
    """Every figure the report has: name (file stem), kind, model, scenario."""
    figures = []
    for model, block in sorted(report["models"].items()):
        safe = _safe(model)
        for scenario in sorted(two_afc_cells(block)):
            figures.append(
                {
                    "name": f"win_matrix__{safe}__{scenario}",
                    "kind": "win_matrix",
                    "model": model,
                    "scenario": scenario,
                }
            )
            figures.append(
                {
                    "name": _figure_4_name(model, scenario),
                    "kind": "figure_4",
                    "model": model,
                    "scenario": scenario,
                }
            )
        if mcq_cells(block):
            figures.append(
                {"name": f"jsd__{safe}", "kind": "jsd", "model": model, "scenario": None}
            )
    return [{**figure, "caption": _caption(figure)} for figure in figures]


CAPTIONS = {
    "win_matrix": "2AFC win matrix (row image chosen over column image)",
    "figure_4": "2AFC win rates within a gender and within a race",
    "jsd": "MCQ: Jensen–Shannon divergence of each group's answers from the pooled ones",
}


def _caption(figure: dict[str, Any]) -> str:
    """What a reader sees under a figure, instead of its file name."""
    where = f", {figure['scenario']}" if figure.get("scenario") else ""
    return f"{CAPTIONS[figure['kind']]} — {figure['model']}{where}"


def figure_bytes(report: dict, figure: dict[str, Any], fmt: str) -> bytes:
    if figure["kind"] == "win_matrix":
        return win_matrix_figure(
            report, model=figure["model"], scenario=figure["scenario"], fmt=fmt
        )
    if figure["kind"] == "figure_4":
        return figure_4_figure(report, model=figure["model"], scenario=figure["scenario"], fmt=fmt)
    return jsd_figure(report, model=figure["model"], fmt=fmt)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-._" else "_" for c in name)


def write_report_bundle(report: dict, out_dir: str | Path, *, figures: bool = True) -> list[Path]:
    """DIR/tables/<table>.csv and DIR/figures/<figure>.{png,svg,csv} of a REFLECT statistics
    block (``report.json`` itself is the report package's: ``scoring.report.folder``)."""
    out = Path(out_dir)
    (out / "tables").mkdir(parents=True, exist_ok=True)
    written = []
    for name, builder in TABLE_BUILDERS.items():
        path = out / "tables" / f"{name}.csv"
        path.write_text(table_csv(builder(report)), encoding="utf-8")
        written.append(path)
    for figure in figure_list(report) if figures else []:
        (out / "figures").mkdir(exist_ok=True)
        for fmt in ("png", "svg"):
            path = out / "figures" / f"{figure['name']}.{fmt}"
            path.write_bytes(figure_bytes(report, figure, fmt))
            written.append(path)
        path = out / "figures" / f"{figure['name']}.csv"
        path.write_text(table_csv(figure_data_rows(report, figure)), encoding="utf-8")
        written.append(path)
    return written


def figure_data_rows(report: dict, figure: dict[str, Any]) -> list[dict]:
    if figure["kind"] == "win_matrix":
        return [
            r
            for r in win_matrix_rows(report)
            if r["model"] == figure["model"] and r["scenario"] == figure["scenario"]
        ]
    if figure["kind"] == "figure_4":
        return [
            r
            for r in figure_4_rows(report)
            if r["model"] == figure["model"] and r["scenario"] == figure["scenario"]
        ]
    return [r for r in mcq_jsd_rows(report) if r["model"] == figure["model"]]


def figure_4_charts(report: dict) -> list[dict[str, Any]]:
    """The Figure 4(d-f) views of each model × scenario for the page: the figure's name (drawn by
    ``figure_bytes``) and its numbers by race (``rows_by_race``: one cell per view, an undefined
    one with its reason)."""
    by_chart: dict[tuple[str, str], list[dict]] = {}
    for row in figure_4_rows(report):
        by_chart.setdefault((row["model"], row["scenario"]), []).append(row)
    return [
        {
            "name": _figure_4_name(model, scenario),
            "caption": _caption({"kind": "figure_4", "model": model, "scenario": scenario}),
            "model": model,
            "scenario": scenario,
            "views": list(FIGURE_4_VIEWS),
            "rows_by_race": [
                {"group": race, "cells": [r for r in rows if r["group"] == race]} for race in RACES
            ],
        }
        for (model, scenario), rows in by_chart.items()
    ]


def _figure_4_name(model: str, scenario: str) -> str:
    return f"figure_4__{_safe(model)}__{scenario}"

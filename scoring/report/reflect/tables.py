"""The REFLECT tables: one place builds each table's rows from the REFLECT statistics block
(Django-free). The report's figures, the staff page, its CSV downloads and the report folder's
``tables/`` all format these rows (dataset → formatter → writer).
"""

from __future__ import annotations

from scoring.report.document_types import (
    ReflectStatistics,
    cell_intervals,
    group_interval,
    mcq_cells,
    salary_block,
    two_afc_cells,
)
from scoring.report.reflect.figure_4 import figure_4_rows
from scoring.stats.reflect.vocabulary import GENDERS, GROUP_KEYS, RACES


def two_afc_summary_rows(report: ReflectStatistics) -> list[dict]:
    keys = (
        "attempted",
        "kept",
        "discarded_invalid",
        "discarded_refusal",
        "discarded_inconsistent",
        "pol",
        "ext",
        "first_position_rate",
    )
    rows = []
    for model, block in sorted(report["models"].items()):
        for scenario, cell in sorted(two_afc_cells(block).items()):
            row = {"model": model, "scenario": scenario, **{k: cell[k] for k in keys}}
            row["pol_ci"] = cell_intervals(cell, "pol")
            rows.append(row)
    return rows


def win_rate_rows(report: ReflectStatistics) -> list[dict]:
    rows = []
    for model, block in sorted(report["models"].items()):
        for scenario, cell in sorted(two_afc_cells(block).items()):
            intervals = cell_intervals(cell, "win_rate")
            for kind, labels in (("race", RACES), ("gender", GENDERS), ("race_gender", GROUP_KEYS)):
                rates = cell["win_rate"][kind]
                for label in labels:
                    low, high = (group_interval(intervals, kind, label) or [None, None])[:2]
                    rows.append(
                        {
                            "model": model,
                            "scenario": scenario,
                            "kind": kind,
                            "group": label,
                            "win_rate": rates.get(label),
                            "ci_low": low,
                            "ci_high": high,
                        }
                    )
    return rows


def win_matrix_rows(report: ReflectStatistics) -> list[dict]:
    rows = []
    for model, block in sorted(report["models"].items()):
        for scenario, cell in sorted(two_afc_cells(block).items()):
            matrix = cell["win_matrix"]
            for winner, row in zip(matrix["groups"], matrix["cells"], strict=False):
                for loser, value in zip(matrix["groups"], row, strict=True):
                    rows.append(
                        {
                            "model": model,
                            "scenario": scenario,
                            "group": winner,
                            "opponent": loser,
                            "win_rate": value,
                        }
                    )
    return rows


def mcq_jsd_rows(report: ReflectStatistics) -> list[dict]:
    rows = []
    for model, block in sorted(report["models"].items()):
        for question, cell in sorted(mcq_cells(block).items()):
            intervals = cell_intervals(cell, "jsd")
            for kind, labels in (("race", RACES), ("gender", GENDERS)):
                for label in labels:
                    low, high = group_interval(intervals, kind, label) or [None] * 2
                    rows.append(
                        {
                            "model": model,
                            "question": question,
                            "kind": kind,
                            "group": label,
                            "valid": cell["valid"],
                            "jsd": cell["jsd"][kind].get(label),
                            "jsd_ci_low": low,
                            "jsd_ci_high": high,
                            "mean_gap": cell["mean_gap"][kind].get(label),
                        }
                    )
    return rows


def salary_gap_rows(report: ReflectStatistics) -> list[dict]:
    rows = []
    for model, block in sorted(report["models"].items()):
        salary = salary_block(block)
        if salary is None:
            continue
        for statistic in ("gap_mean", "gap_median"):
            for occupation, kinds in sorted(salary[statistic].items()):
                for kind, values in kinds.items():
                    for label, value in values.items():
                        rows.append(
                            {
                                "model": model,
                                "statistic": statistic,
                                "occupation": occupation,
                                "kind": kind,
                                "group": label,
                                "gap": value,
                            }
                        )
    return rows


TABLE_BUILDERS = {
    "two_afc_summary": two_afc_summary_rows,
    "win_rates": win_rate_rows,
    "win_matrix": win_matrix_rows,
    "mcq_jsd": mcq_jsd_rows,
    "salary_gaps": salary_gap_rows,
    "figure_4_views": figure_4_rows,
}

"""The REFLECT part formatted for reading: numbers as short strings with their intervals, in
the tables the document shows (Django-free). It only formats ``report["reflect"]``.
"""

from __future__ import annotations

from scoring.report.display import DASH, confidence_label, percent, with_interval
from scoring.report.document_types import (
    Interval,
    ReflectPart,
    ReflectRun,
    cell_intervals,
    group_interval,
    salary_block,
    two_afc_cells,
)
from scoring.report.legal import system_kinds
from scoring.report.reflect import figures as reflect_figures
from scoring.report.reflect.tables import mcq_jsd_rows, win_rate_rows
from scoring.report.reflect.text import moment
from scoring.report.report_section import ReportSection

MEASURES = [
    "2AFC: each pair of a template's ten images is asked twice, once in each order; a "
    "comparison is kept when both answers are valid and name the same person. Win rate = "
    "wins / kept comparisons against another race (gender); the all-trials rate (the paper's "
    "formula) = wins / kept comparisons in which at least one image has the race (gender).",
    "Polarization Pol: mean over the defined win-matrix cells of |w − 0.5| (in [0, 0.5]); "
    "Ext: share of cells below 0.1 or above 0.9. First-position rate: share of valid answers "
    "naming image A (Wilson interval).",
    "MCQ: Jensen–Shannon divergence (bits) of each group's answer distribution from the pooled "
    "one; mean gap (μ_g − μ_ref) / μ_ref of the encoded answers (reference White, female).",
    "Salary: Gap% = (μ_g / μ_ref − 1) × 100 of the stated salaries (reference White, female), "
    "per occupation and over all; OLS with SEs clustered by occupation × biography × template.",
    "Intervals: percentile template-cluster bootstrap (templates resampled within occupation); "
    'definitions in docs/metrics.md, "REFLECT".',
]


def _ci(value, ci: Interval | None, digits: int = 3) -> str:
    low, high = (ci or [None, None])[:2]
    return with_interval(value, low, high, digits)


def display_part(part: ReflectPart) -> dict:
    """Rows of the document's REFLECT tables."""
    return {
        "level": confidence_label(part),
        "measures": MEASURES,
        "runs": [_run(run) for run in part["runs"]],
        "system_kind_label": system_kinds().get(part["system"]["system_kind"], "not stated"),
        "answered_from": moment(part["answers"]["answered_from"]),
        "answered_to": moment(part["answers"]["answered_to"]),
        "two_afc": _two_afc(part),
        "win_rates": _win_rates(part),
        "mcq": [
            {
                **row,
                "jsd": _ci(row["jsd"], [row["jsd_ci_low"], row["jsd_ci_high"]]),
                "mean_gap": _ci(row["mean_gap"], _mean_gap_ci(part, row), 2),
            }
            for row in mcq_jsd_rows(part)
        ],
        "salary": _salary(part),
        "spearman": [
            {
                "scenario": scenario,
                "pair": pair.replace("|", " vs "),
                "rho": with_interval(stat.get("value"), stat.get("ci_low"), stat.get("ci_high"), 2),
                "reason": stat.get("reason") or "",
            }
            # Fewer than two models or no 2AFC answers: no cross-model comparison.
            for scenario, pairs in sorted((part["spearman"] if "spearman" in part else {}).items())
            for pair, stat in sorted(pairs.items())
        ],
        "discards": [
            {
                "scenario": scenario,
                **row,
                "discard_rate": percent(row.get("discard_rate")),
                "refusal_share_of_discards": percent(row.get("refusal_share_of_discards")),
            }
            for scenario, row in (part["discard_table"] if "discard_table" in part else {}).items()
        ],
    }


def _run(run: ReflectRun) -> dict:
    decoding = ", ".join(f"{k} {v}" for k, v in sorted((run["decoding"] or {}).items()))
    progress = "; ".join(
        f"{task} {p['answered']}/{p['planned']}"
        + (f" ({p['errors']} errors)" if p["errors"] else "")
        for task, p in sorted(run["progress"].items())
        if p["planned"] or p["answered"]
    )
    return {
        **run,
        "decoding_text": decoding or "backend defaults",
        "progress_text": progress or DASH,
    }


def _two_afc(part: ReflectPart) -> list[dict]:
    rows = []
    for model, block in sorted(part["models"].items()):
        for scenario, cell in sorted(two_afc_cells(block).items()):
            rows.append(
                {
                    "model": model,
                    "scenario": scenario,
                    "attempted": cell["attempted"],
                    "kept": cell["kept"],
                    "discard_rate": percent(cell["discard_rate"]),
                    "pol": _ci(cell["pol"], cell_intervals(cell, "pol")),
                    "ext": _ci(cell["ext"], cell_intervals(cell, "ext")),
                    "first_position_rate": _ci(
                        cell["first_position_rate"], cell["first_position_rate_ci"]
                    ),
                }
            )
    return rows


def _win_rates(part: ReflectPart) -> list[dict]:
    """One table per model × scenario: each group's win rate and all-trials rate with CIs."""
    tables: dict[tuple[str, str], list[dict]] = {}
    for row in win_rate_rows(part):
        cell = part["models"][row["model"]]["2afc"][row["scenario"]]
        all_trials = cell["win_rate_all_trials"].get(row["kind"])  # no race_gender kind
        all_trials_ci = cell_intervals(cell, "win_rate_all_trials")
        tables.setdefault((row["model"], row["scenario"]), []).append(
            {
                "kind": row["kind"].replace("_", " × "),
                "group": row["group"].replace("|", " "),
                "win_rate": with_interval(row["win_rate"], row["ci_low"], row["ci_high"]),
                "all_trials": DASH
                if all_trials is None
                else _ci(
                    all_trials.get(row["group"]),
                    group_interval(all_trials_ci, row["kind"], row["group"]),
                ),
            }
        )
    return [{"model": m, "scenario": s, "rows": rows} for (m, s), rows in tables.items()]


def _mean_gap_ci(part: ReflectPart, row: dict) -> Interval | None:
    cell = part["models"][row["model"]]["mcq"][row["question"]]
    return group_interval(cell_intervals(cell, "mean_gap"), row["kind"], row["group"])


def _salary(part: ReflectPart) -> list[dict]:
    rows = []
    for model, block in sorted(part["models"].items()):
        salary = salary_block(block)
        if salary is None:
            continue
        gaps = salary["gap_mean"]["all"]
        intervals = cell_intervals(salary, "gap_mean")
        cis = None if intervals is None else intervals["all"]
        for kind in ("race", "gender"):
            for group, value in gaps[kind].items():
                rows.append(
                    {
                        "model": model,
                        "kind": kind,
                        "group": group,
                        "valid": salary["valid"],
                        "gap": _ci(value, group_interval(cis, kind, group), 2),
                    }
                )
    return rows


SECTION = ReportSection(
    id="reflect",
    title="REFLECT: decision tasks on face images",
    templates=("staff/partials/report_reflect.html",),
    present=lambda report: "reflect" in report,
    context=lambda report: {"reflect": display_part(report["reflect"])},
    figures=lambda report: reflect_figures.figure_list(report["reflect"]),
)

"""The study report's tables as the page prints them: disparities, regression, human validation
(Django-free; docs/report.md). Reads the report dict (``scoring.report.dataset.audit_report``)
and formats it with ``scoring.report.display``, so the page and the HTML export print the same
figures as the JSON holds. ``display_report`` is the template's ``display``.
"""

from __future__ import annotations

from itertools import groupby

from scoring.report.display import (
    CORRECTIONS,
    DASH,
    DELTA_TEST,
    TableNotes,
    ci_reason,
    counted,
    delta_families,
    delta_family,
    extremes,
    fleiss_scope,
    highest_lowest,
    items_and_labels,
    number,
    p_value,
    percent,
    ratio_with_interval,
    with_interval,
)
from scoring.report.document_types import fit_coefficients
from scoring.report.equivalence_table import equivalence_display
from scoring.report.ppi_tables import display_ppi
from scoring.report.text import detection_measures


def display_report(report: dict) -> dict:
    """Everything the report template prints, as strings and lists."""
    summary = summary_table(disparity_summary(report))
    return {
        "disparity_sources": [
            {
                "source": source,
                "rows": [_disparity(row) for row in rows],
                "family": delta_family(rows),
            }
            for source, rows in (
                (source, list(rows))
                for source, rows in groupby(report["disparities"], key=lambda row: row["source"])
            )
        ],
        "summary": summary,
        "summary_family": delta_families(report["disparities"]),
        "delta_test": DELTA_TEST,
        "flagged": [row for row in summary["rows"] if row["flagged"]],
        "regression": [_regression(table) for table in report["regression"]],
        **_validation_table(report["validation"]["human_vs_auto"]),
        "inter_annotator": _inter_annotator(report["validation"]["inter_annotator"]),
        "inter_annotator_without_items": _scopes_without_items(
            report["validation"]["inter_annotator"]
        ),
        "measures": detection_measures(report),
        "ppi": display_ppi(report),
        "equivalence": equivalence_display(report),
    }


def disparity_summary(report: dict) -> list[dict]:
    """The compact table (dashboard and report summary): one line per source × measure × attribute."""
    return [
        {
            "source": row["source"],
            "measure": row["measure"],
            "attribute": row["attribute"],
            "n": items_and_labels(row),
            "delta": with_interval(
                row.get("delta"), row.get("delta_ci_low"), row.get("delta_ci_high")
            ),
            "delta_reason": delta_note(row) if row.get("delta") is None else "",
            "delta_ci_reason": ci_reason(row, "delta"),
            **_extremes(row),
            "delta_p": p_value(row["delta_p"]),
            "delta_p_holm": p_value(row["delta_p_holm"]),
            "flagged": row["flagged"],
        }
        for row in report["disparities"]
    ]


def summary_table(rows: list[dict]) -> dict:
    """``disparity_summary`` rows in the order given, each Δ cell with the mark of its reason
    (undefined, or no interval), and the reasons said once under the table (``notes``)."""
    notes = TableNotes()
    marked_rows = [
        {**row, "delta_mark": notes.mark(row["delta_reason"] or row["delta_ci_reason"])}
        for row in rows
    ]
    return {"rows": marked_rows, "notes": notes.items}


def delta_note(row: dict) -> str:
    """Why a disparity row's Δ is undefined; for an attribute with one value, that value against
    the neutral baseline (a bare "undefined" says nothing about the one rate there is)."""
    reason = row.get("delta_reason") or "undefined"
    defined = [entry for entry in row["values"] if entry.get("rate") is not None]
    if len(defined) != 1:
        return reason
    return f"{reason}: {one_value_against_neutral(defined[0], row.get('neutral_rate'))}"


def one_value_against_neutral(entry: dict, neutral_rate) -> str:
    """``hijab 35.2% against the neutral baseline's 12.0% (ratio 2.93 [1.20, 5.10])``."""
    rate = f"{entry['value']} {percent(entry['rate'])}"
    if neutral_rate is None:
        return f"{rate}; the study has no neutral baseline to compare it with"
    text = f"{rate} against the neutral baseline's {percent(neutral_rate)}"
    ratio = entry.get("ratio_to_neutral")
    if ratio is None:
        why = entry.get("ratio_to_neutral_reason")
        return text + (f" (no ratio: {why})" if why else "")
    shown = ratio_with_interval(
        ratio, entry.get("ratio_to_neutral_ci_low"), entry.get("ratio_to_neutral_ci_high")
    )
    return f"{text} (ratio {shown})"


def _extremes(row: dict) -> dict:
    highest, lowest = extremes(row.get("max_value"), row.get("min_value"), row.get("delta"))
    return {"max_value": highest, "min_value": lowest}


def _disparity(row: dict) -> dict:
    values = [
        {
            "value": entry["value"],
            "n": items_and_labels(entry),
            "successes": entry["successes"],
            "rate": with_interval(
                entry["rate"], entry["ci_low"], entry["ci_high"], as_percent=True
            ),
            "ratio_to_neutral": ratio_with_interval(
                entry.get("ratio_to_neutral"),
                entry.get("ratio_to_neutral_ci_low"),
                entry.get("ratio_to_neutral_ci_high"),
            ),
            "reason": entry.get("reason")
            or entry.get("ratio_to_neutral_reason")
            or ci_reason(entry, "ratio_to_neutral"),
        }
        for entry in row["values"]
    ]
    pairs = [
        {
            "pair": f"{test['value_a']} vs {test['value_b']}",
            "test": test.get("test") or DASH,
            "p": p_value(test["p_value"]),
            "p_holm": p_value(test["p_holm"]),
            "p_bh": p_value(test["p_bh"]),
            "cohen_h": number(test.get("cohen_h")),
            "odds_ratio": ratio_with_interval(
                test.get("odds_ratio"),
                test.get("odds_ratio_ci_low"),
                test.get("odds_ratio_ci_high"),
            ),
            "note": CORRECTIONS.get(test.get("odds_ratio_correction"), "")
            or test.get("odds_ratio_reason", ""),
        }
        for test in row["pairwise_tests"]
    ]
    return {
        **{key: row.get(key) for key in ("source", "measure", "attribute", "flagged")},
        "n": items_and_labels(row),
        "delta": with_interval(row.get("delta"), row.get("delta_ci_low"), row.get("delta_ci_high")),
        "delta_reason": delta_note(row) if row.get("delta") is None else "",
        "delta_ci_reason": ci_reason(row, "delta"),
        "ratio_ci_reason": ci_reason(row, "ratio"),
        **_extremes(row),
        "extremes": highest_lowest(row.get("max_value"), row.get("min_value"), row.get("delta")),
        "ratio": ratio_with_interval(
            row.get("ratio"), row.get("ratio_ci_low"), row.get("ratio_ci_high")
        ),
        "neutral_rate": percent(row.get("neutral_rate")),
        "delta_p": p_value(row["delta_p"]),
        "delta_p_holm": p_value(row["delta_p_holm"]),
        "delta_p_bh": p_value(row["delta_p_bh"]),
        "values": values,
        "pairs": pairs,
    }


def _regression(table: dict) -> dict:
    fits = {method: table[method] for method in ("cluster", "gee")}
    values = sorted({v for fit in fits.values() for v in fit_coefficients(fit)})
    rows = []
    for value in values:
        row = {"value": value}
        for method, fit in fits.items():
            # A value one method dropped (a level without events) has no coefficient there.
            coefficients = fit_coefficients(fit)
            c = coefficients[value] if value in coefficients else {}
            row[method] = {
                "beta": number(c.get("beta")),
                "odds_ratio": ratio_with_interval(
                    c.get("odds_ratio"), c.get("ci_low"), c.get("ci_high")
                ),
                "p": p_value(c.get("p_value")),
                "reason": c.get("reason", ""),
            }
        rows.append(row)
    return {
        **{key: table[key] for key in ("source", "outcome", "attribute", "reference")},
        "reference_chosen_by": table["reference_chosen_by"],
        "n_observations": table["n_observations"],
        "fits": {
            method: {
                "fitted": fit.get("fitted", False),
                "reason": fit.get("reason", ""),
                "n": fit.get("n"),
                "n_clusters": fit.get("n_clusters"),
                "covariates": ", ".join(fit.get("covariates") or []) or DASH,
                "dropped": "; ".join(d["reason"] for d in fit.get("dropped_levels") or []),
            }
            for method, fit in fits.items()
        },
        "rows": rows,
    }


def _validation_table(rows: list[dict]) -> dict:
    """The judges-against-annotators rows, κ's reason as a mark and a note under the table."""
    notes = TableNotes()
    shown = [_validation(row) for row in rows]
    return {
        "validation_rows": [{**row, "mark": notes.mark(row["reason"])} for row in shown],
        "validation_notes": notes.items,
    }


def _validation(row: dict) -> dict:
    return {
        **{key: row[key] for key in ("judge", "question", "scope", "name", "n")},
        "percent_agreement": percent(row.get("percent_agreement")),
        "cohen_kappa": with_interval(
            row.get("cohen_kappa"), row.get("cohen_kappa_ci_low"), row.get("cohen_kappa_ci_high")
        ),
        "reason": row.get("cohen_kappa_reason") or ci_reason(row, "cohen_kappa"),
    }


def _agreement_row(scope: str, name: str, question: str, block: dict) -> dict:
    return {
        "scope": scope,
        "name": name or "(no group)",
        "question": question,
        "n_items": block.get("n_items"),
        "n_annotators": block.get("n_annotators"),
        "percent_agreement": percent(block.get("percent_agreement")),
        "kappa": number(block.get("cohen_kappa_pairwise_mean")),
        "fleiss": number(block.get("fleiss_kappa")),
        # The items Fleiss' κ stands on (those with the most common number of annotations), not
        # the Items column's all-items count (docs/metrics.md, "Fleiss' kappa").
        "fleiss_items": (
            counted(block["fleiss_kappa_n_items"], "item")
            if block.get("fleiss_kappa") is not None and block.get("fleiss_kappa_n_items")
            else ""
        ),
        "alpha": with_interval(
            block.get("krippendorff_alpha"),
            block.get("krippendorff_alpha_ci_low"),
            block.get("krippendorff_alpha_ci_high"),
        ),
        "ac1": number(block.get("gwet_ac1")),
        "reason": block.get("krippendorff_alpha_reason")
        or block.get("cohen_kappa_pairwise_mean_reason")
        or ci_reason(block, "krippendorff_alpha"),
        "fleiss_scope": fleiss_scope(block),
    }


def _inter_annotator(section: dict) -> list[dict]:
    """The rows of the agreement table; an attribute value or annotator group in which no item
    has two answers gets no row of zeros (``_scopes_without_items`` names them once)."""
    rows = [
        _agreement_row("overall", "all", question, block)
        for question, block in section["overall"].items()
    ]
    for scope, key in (("attribute", "by_attribute"), ("annotator group", "by_annotator_group")):
        for name, questions in section[key].items():
            rows.extend(
                _agreement_row(scope, name, question, block)
                for question, block in questions.items()
                if block.get("n_items")
            )
    return rows


def _scopes_without_items(section: dict) -> list[str]:
    """``annotator group Korean``, ... : the scopes left out of the table, none of whose items
    has two answers within the scope."""
    return [
        f"{scope} {name or '(no group)'}"
        for scope, key in (("attribute", "by_attribute"), ("annotator group", "by_annotator_group"))
        for name, questions in section[key].items()
        if not any(block.get("n_items") for block in questions.values())
    ]

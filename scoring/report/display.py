"""The report dict formatted for reading: numbers as short strings, grouped the way the page
shows them (docs/report.md). The dataset is ``scoring.report.dataset.audit_report``; this module only
formats it, so the page and the HTML export print the same figures as the JSON holds.
"""

from __future__ import annotations

from itertools import groupby

from scoring.report.document_types import (
    JudgeErrorTest,
    PpiOutcome,
    fit_coefficients,
    judge_error_per_value,
    judge_error_section,
    ppi_blocks,
    ppi_section,
)
from scoring.report.text import (
    detection_measures,
    judge_error_verdict,
    judge_only_cautions,
    ppi_findings,
)

DASH = "—"


def number(value, digits: int = 3) -> str:
    """``value`` to ``digits`` decimals; a value that rounds to zero prints as 0, never −0 (a
    coefficient of −1e-16 is floating-point noise, not a negative effect)."""
    if value is None:
        return DASH
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """``1 item``, ``3 items``, ``2 analyses`` (with ``plural``)."""
    return f"{n} {singular if n == 1 else (plural or singular + 's')}"


def percent(value, digits: int = 1) -> str:
    return DASH if value is None else f"{100 * value:.{digits}f}%"


def p_value(value) -> str:
    if value is None:
        return DASH
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def ratio_number(value) -> str:
    """A ratio readable across orders of magnitude: 0.0031, 0.30, 3.37, 1,602 (not 0.00, 1601.64)."""
    if value is None:
        return DASH
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 0.1:
        return f"{value:.2f}"
    return f"{value:.2g}"


def ratio_with_interval(value, low, high) -> str:
    if low is None or high is None:
        return ratio_number(value)
    if low == high:
        return f"{ratio_number(value)} {ZERO_WIDTH}"
    return f"{ratio_number(value)} [{ratio_number(low)}, {ratio_number(high)}]"


CORRECTIONS = {
    "haldane_anscombe": "a zero cell: 0.5 added to every cell (Haldane–Anscombe correction)",
}


# docs/metrics.md, "Intervals that cannot carry uncertainty": never "0.000 [0.000, 0.000]".
ZERO_WIDTH = "(no interval: every resample gave the same value)"


def interval(low, high, digits: int = 3, *, as_percent: bool = False) -> str:
    """``[low, high]``; "" without bounds; the reason instead of a zero-width interval."""
    if low is None or high is None:
        return ""
    if low == high:
        return ZERO_WIDTH
    show = (lambda v: percent(v, digits - 2)) if as_percent else (lambda v: number(v, digits))
    return f"[{show(low)}, {show(high)}]"


def with_interval(value, low, high, digits: int = 3, *, as_percent: bool = False) -> str:
    point = percent(value, digits - 2) if as_percent else number(value, digits)
    return f"{point} {interval(low, high, digits, as_percent=as_percent)}".strip()


def fleiss_scope(block: dict) -> str:
    """Which items Fleiss' κ rests on, when fewer than the block's ``n_items``: it needs the same
    number of annotations per item, so it uses the items with the most common number
    (docs/metrics.md, "Fleiss' kappa"). One wording for the dashboard, the summary and the report,
    so "Fleiss' κ … · 99 items" never contradicts the export's ``fleiss_kappa_n_items: 67``."""
    n_fleiss, n_items = block.get("fleiss_kappa_n_items"), block.get("n_items")
    if block.get("fleiss_kappa") is None or not n_fleiss or n_fleiss == n_items:
        return ""
    per_item = block.get("fleiss_kappa_annotations_per_item")
    each = f", those with {per_item} annotations each" if per_item else ""
    return f"on {n_fleiss} of {n_items} items{each}"


def items_and_labels(entry: dict) -> str:
    """``n`` as "items (labels)": 120 (240) when two annotators labelled each item; the label
    count alone where the entry has no ``n_items`` (docs/metrics.md, "Study export: rates")."""
    n, n_items = entry.get("n"), entry.get("n_items")
    if n is None:
        return DASH
    return str(n) if n_items is None else f"{n_items} ({n})"


# docs/metrics.md, "Test of Δ": one wording wherever Δ's p is printed.
DELTA_TEST = (
    "max-t test from the same bootstrap as Δ's interval: p < 1 − confidence exactly when the "
    "interval excludes 0"
)


def delta_family(rows: list[dict]) -> str:
    """The family of one source's Δ tests, said once under a table of them: what p and the
    interval span, what Holm adjusts across, what sets the flag."""
    tested = sum(1 for row in rows if row.get("delta_p") is not None)
    across = (
        f"the {tested} rows of this source (measures × attributes)"
        if tested == len(rows)
        else f"the {tested} of this source's {len(rows)} rows (measures × attributes) that have a p"
    )
    return (
        "p and the interval span the pairs of one attribute; p Holm adjusts p across "
        f"{across} and sets the flag."
    )


def delta_families(rows: list[dict]) -> str:
    """``delta_family`` for a table of several sources: each source's family size."""
    sizes = {}
    for row in rows:
        sizes[row["source"]] = sizes.get(row["source"], 0) + (row.get("delta_p") is not None)
    if len(sizes) == 1:
        return delta_family(rows)
    listed = ", ".join(f"{source} {n}" for source, n in sizes.items())
    return (
        "p and the interval span the pairs of one attribute; p Holm adjusts p across the rows "
        f"of the same source that have a p (measures × attributes: {listed}) and sets the flag."
    )


def _ci_reason(row: dict, name: str) -> str:
    """Why ``name``'s interval is missing although ``name`` is defined ("" otherwise), so the
    reader sees the reason where "0.188 [0.188, 0.188]" would have stood."""
    if row.get(name) is None or row.get(f"{name}_ci_low") is not None:
        return ""
    reason = row.get(f"{name}_ci_reason")
    return f"no interval: {reason}" if reason else ""


def display_report(report: dict) -> dict:
    """Everything the report template prints, as strings and lists."""
    summary = disparity_summary(report)
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
        "flagged": [row for row in summary if row["flagged"]],
        "regression": [_regression(table) for table in report["regression"]],
        "validation_rows": [_validation(row) for row in report["validation"]["human_vs_auto"]],
        "inter_annotator": _inter_annotator(report["validation"]["inter_annotator"]),
        "inter_annotator_without_items": _scopes_without_items(
            report["validation"]["inter_annotator"]
        ),
        "measures": detection_measures(report),
        "ppi": display_ppi(report),
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
            "delta_reason": row.get("delta_reason", ""),
            "delta_ci_reason": _ci_reason(row, "delta"),
            "max_value": row.get("max_value") or DASH,
            "min_value": row.get("min_value") or DASH,
            "delta_p": p_value(row["delta_p"]),
            "delta_p_holm": p_value(row["delta_p_holm"]),
            "flagged": row["flagged"],
        }
        for row in report["disparities"]
    ]


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
            or _ci_reason(entry, "ratio_to_neutral"),
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
        "delta_reason": row.get("delta_reason", ""),
        "delta_ci_reason": _ci_reason(row, "delta"),
        "ratio_ci_reason": _ci_reason(row, "ratio"),
        "max_value": row.get("max_value") or DASH,
        "min_value": row.get("min_value") or DASH,
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


def _validation(row: dict) -> dict:
    return {
        **{key: row[key] for key in ("judge", "question", "scope", "name", "n")},
        "percent_agreement": percent(row.get("percent_agreement")),
        "cohen_kappa": with_interval(
            row.get("cohen_kappa"), row.get("cohen_kappa_ci_low"), row.get("cohen_kappa_ci_high")
        ),
        "reason": row.get("cohen_kappa_reason") or _ci_reason(row, "cohen_kappa"),
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
        "alpha": with_interval(
            block.get("krippendorff_alpha"),
            block.get("krippendorff_alpha_ci_low"),
            block.get("krippendorff_alpha_ci_high"),
        ),
        "ac1": number(block.get("gwet_ac1")),
        "reason": block.get("krippendorff_alpha_reason")
        or block.get("cohen_kappa_pairwise_mean_reason")
        or _ci_reason(block, "krippendorff_alpha"),
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


# --- prediction-powered estimates and judge fairness (docs/report.md, "Judges and humans") ----


def _estimate(block: dict | None, *, as_percent: bool = False) -> dict:
    """``{"text", "reason"}`` of an ``{estimate, ci_low, ci_high}`` block: the value with its
    interval, the reason it is undefined, or "no interval: …"."""
    block = block if isinstance(block, dict) else {}
    value = block.get("estimate")
    if value is None:
        return {"text": DASH, "reason": block.get("reason") or ""}
    text = with_interval(value, block.get("ci_low"), block.get("ci_high"), as_percent=as_percent)
    reason = ""
    if block.get("ci_low") is None:
        reason = f"no interval: {block.get('ci_reason') or 'not computed'}"
    return {"text": text, "reason": reason}


def _error_rate(entry: dict, name: str) -> dict:
    value = entry.get(name)
    if value is None:
        return {"text": DASH, "reason": entry.get(f"{name}_reason") or ""}
    return {
        "text": with_interval(
            value, entry.get(f"{name}_ci_low"), entry.get(f"{name}_ci_high"), as_percent=True
        ),
        "reason": "",
    }


def _judge_bias(block: dict | None) -> dict:
    """The judge-bias cell: the value with the largest judge − PPI gap, its simultaneous
    interval, and the warning (docs/metrics.md, "Judge bias")."""
    block = block if isinstance(block, dict) else {}
    value = block.get("largest_value")
    entry = (block.get("per_value") or {}).get(value) if value is not None else None
    if entry is None:
        return {"text": DASH, "reason": block.get("reason") or ""}
    shown = _estimate(entry)
    warning = block.get("warning")
    verdict = {True: "warning", False: "no warning", None: "no verdict"}[warning]
    return {"text": f"{value}: {shown['text']}", "reason": shown["reason"] or verdict}


def _ppi_outcome(
    judge: str,
    outcome: str,
    section: PpiOutcome,
    errors: dict[str, JudgeErrorTest],
    cautions: set,
) -> dict:
    neutral_gap, bias = ppi_blocks(section, "vs_neutral"), ppi_blocks(section, "judge_bias")
    deltas = []
    for attribute, block in sorted(ppi_blocks(section, "delta").items()):
        # An attribute none of whose items has a human reference has no error test.
        test = errors[attribute] if attribute in errors else {}
        judge_bias = bias[attribute] if attribute in bias else None
        deltas.append(
            {
                "attribute": attribute,
                "delta": _estimate(block),
                "max_value": (block or {}).get("max_value") or DASH,
                "min_value": (block or {}).get("min_value") or DASH,
                "judge_delta": number((judge_bias or {}).get("judge_delta")),
                "bias": _judge_bias(judge_bias),
                "differential": test.get("differential"),
                "p_holm": p_value(test.get("p_holm")),
                "do_not_report": (judge, outcome, attribute) in cautions,
            }
        )
    rates = [
        {
            "attribute": attribute,
            "value": value,
            "rate": _estimate(entry, as_percent=True),
            "lambda": number((entry or {}).get("lambda"), 2),
            "n_labelled": (entry or {}).get("n_labelled"),
            "n_unlabelled": (entry or {}).get("n_unlabelled"),
            # The neutral baseline has no gap to itself.
            "vs_neutral": _estimate(
                neutral_gap[attribute].get(value) if attribute in neutral_gap else None
            ),
        }
        for attribute, values in sorted(ppi_blocks(section, "rates").items())
        for value, entry in sorted((values or {}).items())
    ]
    tests = [
        {
            "attribute": attribute,
            "p_value": p_value(test.get("p_value")),
            "p_holm": p_value(test.get("p_holm")),
            "differential": test.get("differential"),
            "test": test.get("test") or "",
            "reason": test.get("reason") or test.get("differential_reason") or "",
            "verdict": judge_error_verdict(test),
            "values": [
                {
                    "value": value,
                    "n": (entry or {}).get("n"),
                    "fpr": _error_rate(entry or {}, "fpr"),
                    "fnr": _error_rate(entry or {}, "fnr"),
                }
                for value, entry in sorted(judge_error_per_value(test).items())
            ],
        }
        for attribute, test in sorted(errors.items())
        if isinstance(test, dict)
    ]
    return {
        "outcome": outcome,
        "deltas": deltas,
        "rates": rates,
        "errors": tests,
        "do_not_report": any(row["do_not_report"] for row in deltas),
    }


def display_ppi(report: dict) -> dict:
    """The PPI section as the report and the staff pages print it: per judge and outcome, the
    PPI Δ with the judge-only Δ and their difference, the PPI rates (λ, n labelled and
    unlabelled, against the neutral baseline) and the judge's error per value with its test.
    Reads the study export / report.json keys ``ppi`` and ``judge_error``; empty when absent."""
    ppi, judge_error = ppi_section(report), judge_error_section(report)
    cautions = {(r["judge"], r["outcome"], r["attribute"]) for r in judge_only_cautions(report)}
    judges = []
    for judge in sorted(set(ppi) | set(judge_error)):
        # The builder writes both for every judge; a hand-made document may hold one.
        estimates = ppi[judge] if judge in ppi else {}
        errors = judge_error[judge] if judge in judge_error else {}
        judges.append(
            {
                "judge": judge,
                "outcomes": [
                    _ppi_outcome(
                        judge,
                        outcome,
                        # No estimates for an outcome with error tests only: no rows.
                        estimates[outcome] if outcome in estimates else {},
                        errors[outcome] if outcome in errors else {},
                        cautions,
                    )
                    for outcome in sorted(set(estimates) | set(errors))
                ],
            }
        )
    return {"judges": judges, "findings": ppi_findings(report), "present": bool(judges)}


def _scopes_without_items(section: dict) -> list[str]:
    """``annotator group Korean``, ... : the scopes left out of the table, none of whose items
    has two answers within the scope."""
    return [
        f"{scope} {name or '(no group)'}"
        for scope, key in (("attribute", "by_attribute"), ("annotator group", "by_annotator_group"))
        for name, questions in section[key].items()
        if not any(block.get("n_items") for block in questions.values())
    ]

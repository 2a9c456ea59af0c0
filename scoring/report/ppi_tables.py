"""The report's prediction-powered estimates and judge fairness as the page prints them
(Django-free; docs/report.md, "Judges and humans"): per judge and outcome, the PPI Δ beside the
judge-only Δ, the PPI rates and the judge's error per value. Shared by the report's section and
the staff pages (templates/staff/partials/ppi_tables.html).
"""

from __future__ import annotations

from scoring.report.display import (
    DASH,
    TableNotes,
    confidence_label,
    highest_lowest,
    marked,
    number,
    p_value,
    with_interval,
)
from scoring.report.document_types import (
    JudgeErrorTest,
    PpiOutcome,
    judge_error_per_value,
    judge_error_section,
    ppi_blocks,
    ppi_section,
)
from scoring.report.text import judge_error_verdict, judge_only_cautions, ppi_findings


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
        return {"text": DASH, "verdict": "", "reason": block.get("reason") or ""}
    shown = _estimate(entry)
    verdict = {True: "warning", False: "no warning", None: "no verdict"}[block.get("warning")]
    return {"text": f"{value}: {shown['text']}", "verdict": verdict, "reason": shown["reason"]}


def _ppi_outcome(
    judge: str,
    outcome: str,
    section: PpiOutcome,
    errors: dict[str, JudgeErrorTest],
    cautions: set,
    level: str,
) -> dict:
    neutral_gap, bias = ppi_blocks(section, "vs_neutral"), ppi_blocks(section, "judge_bias")
    # Each table says its reasons once under it (display.TableNotes).
    delta_notes, rate_notes, error_notes = TableNotes(), TableNotes(), TableNotes()
    deltas = []
    for attribute, block in sorted(ppi_blocks(section, "delta").items()):
        # An attribute none of whose items has a human reference has no error test.
        test = errors[attribute] if attribute in errors else {}
        judge_bias = bias[attribute] if attribute in bias else None
        deltas.append(
            {
                "attribute": attribute,
                "delta": marked(_estimate(block), delta_notes),
                "extremes": highest_lowest(
                    (block or {}).get("max_value"),
                    (block or {}).get("min_value"),
                    (block or {}).get("estimate"),
                ),
                "judge_delta": number((judge_bias or {}).get("judge_delta")),
                "bias": marked(_judge_bias(judge_bias), delta_notes),
                "differential": test.get("differential"),
                "p_holm": p_value(test.get("p_holm")),
                "do_not_report": (judge, outcome, attribute) in cautions,
            }
        )
    rates = [
        {
            "attribute": attribute,
            "value": value,
            "rate": marked(_estimate(entry, as_percent=True), rate_notes),
            "lambda": number((entry or {}).get("lambda"), 2),
            "n_labelled": (entry or {}).get("n_labelled"),
            "n_unlabelled": (entry or {}).get("n_unlabelled"),
            # The neutral baseline has no gap to itself.
            "vs_neutral": marked(
                _estimate(neutral_gap[attribute].get(value) if attribute in neutral_gap else None),
                rate_notes,
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
                    "fpr": marked(_error_rate(entry or {}, "fpr"), error_notes),
                    "fnr": marked(_error_rate(entry or {}, "fnr"), error_notes),
                }
                for value, entry in sorted(judge_error_per_value(test).items())
            ],
        }
        for attribute, test in sorted(errors.items())
        if isinstance(test, dict)
    ]
    return {
        "outcome": outcome,
        "level": level,
        "deltas": deltas,
        "delta_notes": delta_notes.items,
        "rates": rates,
        "rate_notes": rate_notes.items,
        "errors": tests,
        "error_notes": error_notes.items,
        "do_not_report": any(row["do_not_report"] for row in deltas),
    }


def display_ppi(report: dict) -> dict:
    """The PPI section as the report and the staff pages print it: per judge and outcome, the
    PPI Δ with the judge-only Δ and their difference, the PPI rates (λ, n labelled and
    unlabelled, against the neutral baseline) and the judge's error per value with its test.
    Reads the study export / report.json keys ``ppi`` and ``judge_error``; empty when absent."""
    ppi, judge_error = ppi_section(report), judge_error_section(report)
    cautions = {(r["judge"], r["outcome"], r["attribute"]) for r in judge_only_cautions(report)}
    level = confidence_label(report)
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
                        level,
                    )
                    for outcome in sorted(set(estimates) | set(errors))
                ],
            }
        )
    return {"judges": judges, "findings": ppi_findings(report), "present": bool(judges)}

"""The staff study page's summary: what a research lead reads in a minute (docs/annotation.md,
"Staff pages").

Django-free. It picks and orders numbers from the metrics document
(``scoring.metrics.document.metrics_document``) and the audit report (``scoring.report.dataset``) and a
few counts ``annotations.selectors`` reads; it computes no statistic of its own, so every number
on the summary is the one the export and the report hold.
"""

from __future__ import annotations

from scoring.report.display import (
    confidence_label,
    fleiss_scope,
    highest_lowest,
    number,
    p_value,
    with_interval,
)
from scoring.report.equivalence_table import verdict_counts, verdict_for
from scoring.report.text import differential_errors, judge_only_cautions, ppi_deltas
from scoring.stats.agreement import agreement_band

HUMAN = "human"
# Below Landis & Koch's "moderate" a judge's labels do not stand in for human ones.
JUDGE_MIN_KAPPA = 0.40
# An annotator with this share of answers faster than the study's minimum time needs a look.
TOO_FAST_SHARE = 0.10
LARGEST_DISPARITIES = 5
SUMMARY_CAUTIONS = 2


def human_first(rows: list, *, key: str | None = "source") -> list:
    """Human-labelled rows before the judges', each group in its given order; with
    ``key=None`` the rows are source names themselves."""
    return sorted(rows, key=lambda row: (row if key is None else row[key]) != HUMAN)


def stat_text(block: dict, name: str, *, digits: int = 3) -> dict:
    """A statistic as the page prints it: the value with its interval, or the reason it has none.

    ``reason`` says why the value is undefined; ``ci_reason`` why a defined value has no interval
    (docs/metrics.md, "Intervals that cannot carry uncertainty").
    """
    value = block.get(name)
    low, high = block.get(f"{name}_ci_low"), block.get(f"{name}_ci_high")
    return {
        "value": value,
        "text": with_interval(value, low, high, digits) if value is not None else "—",
        "reason": "" if value is not None else block.get(f"{name}_reason", ""),
        "ci_reason": (
            block.get(f"{name}_ci_reason", "") if value is not None and low is None else ""
        ),
    }


def agreement_headline(metrics: dict) -> list[dict]:
    """Per question: Krippendorff's α with its CI and Landis & Koch band, beside Fleiss' κ."""
    rows = []
    for question, block in metrics["agreement"]["inter_annotator"].items():
        alpha = stat_text(block, "krippendorff_alpha")
        rows.append(
            {
                "question": question,
                "n_items": block.get("n_items"),
                "n_annotators": block.get("n_annotators"),
                "alpha": alpha,
                "band": agreement_band(alpha["value"]),
                "fleiss_kappa": stat_text(block, "fleiss_kappa"),
                "fleiss_scope": fleiss_scope(block),
                "percent_agreement": block.get("percent_agreement"),
            }
        )
    return rows


def largest_disparities(report: dict, *, limit: int = LARGEST_DISPARITIES) -> list[dict]:
    """The ``limit`` largest defined Δ of the human labels (of every source when there are no
    human labels), with the CI or the reason it has none, and the Holm-adjusted p."""
    defined = [row for row in report["disparities"] if row.get("delta") is not None]
    human = [row for row in defined if row["source"] == HUMAN]
    rows = sorted(human or defined, key=lambda row: -row["delta"])[:limit]
    return [
        {
            "source": row["source"],
            "measure": row["measure"],
            "attribute": row["attribute"],
            "n": row.get("n"),
            "delta": stat_text(row, "delta"),
            "extremes": highest_lowest(row.get("max_value"), row.get("min_value"), row["delta"]),
            "p_holm": p_value(row.get("delta_p_holm")),
            "flagged": bool(row.get("flagged")),
            # What the row lets the study claim, in the report's words (docs/metrics.md).
            "claim": verdict_for(report, row["source"], row["measure"], row["attribute"]),
        }
        for row in rows
    ]


def claim_counts(rows: list[dict]) -> list[dict]:
    """How many of ``rows`` (``largest_disparities``) each verdict covers: the summary's line
    under the table, in the report's words."""
    return verdict_counts(row["claim"] for row in rows)


def warnings(
    *,
    metrics: dict,
    report: dict,
    validation_rows: list[dict],
    annotators: list[dict],
    flags_waiting: int,
    audit_context_missing: list[str] = (),
) -> list[dict]:
    """What needs action, most urgent first: each ``{"kind", "text", "link"}`` (``link`` names a
    section of the page or a staff page the template resolves). ``audit_context_missing``: the
    audit-context fields not stated yet (their labels), the last and least urgent item."""
    found = []
    if flags_waiting:
        found.append(
            _warning(
                "flags",
                f"{flags_waiting} item(s) flagged as broken images wait for review.",
                "flag_queue",
            )
        )
    for row in annotators:
        share = row["too_fast"] / row["done"] if row["done"] else 0.0
        if share >= TOO_FAST_SHARE:
            found.append(
                _warning(
                    "too_fast",
                    f"{row['username']}: {row['too_fast']} of {row['done']} answers "
                    f"({share:.0%}) faster than the study's minimum time per item.",
                    "progress",
                )
            )
    for row in validation_rows:
        # Before any human answer there is nothing to disagree with (a red
        # "disagrees with the humans … over 0 items" on a study nobody had labelled yet).
        if row["scope"] != "overall" or not row.get("n"):
            continue
        kappa = row.get("cohen_kappa")
        if kappa is None:
            found.append(
                _warning(
                    "judge",
                    f"{row['judge']} cannot be checked against the humans on "
                    f"{row['question']}: κ is undefined over {row['n']} items.",
                    "validation",
                )
            )
        elif kappa < JUDGE_MIN_KAPPA:
            said = f"κ = {number(kappa)} ({agreement_band(kappa)})"
            found.append(
                _warning(
                    "judge",
                    f"{row['judge']} disagrees with the humans on {row['question']}: "
                    f"{said} over {row['n']} items.",
                    "validation",
                )
            )
    found += _interval_warnings(metrics, report)
    if audit_context_missing:
        found.append(
            _warning(
                "audit_context",
                f"Audit context not stated: {', '.join(audit_context_missing)}. "
                'The report prints "not stated" there and cannot pick the legal route '
                "without the system audited.",
                "audit_context",
            )
        )
    return found


def _interval_warnings(metrics: dict, report: dict) -> list[dict]:
    disparities = report["disparities"]
    # A report built without settings (hand-made in tests, or by older versions) has no min_n.
    min_n = report["settings"].get("min_n") if "settings" in report else None
    found = []
    reasons: dict[str, int] = {}
    for row in disparities:
        if row.get("delta") is not None and row.get("delta_ci_low") is None:
            reason = row.get("delta_ci_reason") or "no reason given"
            reasons[reason] = reasons.get(reason, 0) + 1
    agreement = metrics["agreement"]["inter_annotator"] if "agreement" in metrics else {}
    for block in agreement.values():
        for name in ("krippendorff_alpha", "fleiss_kappa"):
            if block.get(name) is not None and block.get(f"{name}_ci_reason"):
                reason = block[f"{name}_ci_reason"]
                reasons[reason] = reasons.get(reason, 0) + 1
    for reason, count in sorted(reasons.items(), key=lambda pair: -pair[1]):
        found.append(
            _warning(
                "degenerate", f"{count} statistic(s) have no interval: {reason}.", "disparities"
            )
        )
    if min_n:
        small = sum(1 for row in disparities if row.get("n") is not None and row["n"] < min_n)
        if small:
            found.append(
                _warning(
                    "small_n",
                    f"{small} disparity row(s) rest on fewer than {min_n} answers: "
                    "read their Δ as indicative only.",
                    "disparities",
                )
            )
    return found


def _warning(kind: str, text: str, link: str) -> dict:
    return {"kind": kind, "text": text, "link": link}


INTER_ANNOTATOR_STATS = ("fleiss_kappa", "krippendorff_alpha", "cohen_kappa_pairwise_mean")


def inter_annotator_rows(metrics: dict) -> list[dict]:
    """The detail table of inter-annotator agreement: each statistic with its interval or the
    reason it has none."""
    return [
        {
            "question": question,
            "n_items": block.get("n_items"),
            "percent_agreement": stat_text(block, "percent_agreement"),
            **{name: stat_text(block, name) for name in INTER_ANNOTATOR_STATS},
            "fleiss_scope": fleiss_scope(block),
            "band": agreement_band(block.get("krippendorff_alpha")),
        }
        for question, block in metrics["agreement"]["inter_annotator"].items()
    ]


def validation_display_rows(validation_rows: list[dict]) -> list[dict]:
    """The human-vs-judge rows (``scoring.metrics.document.validation_table``) with κ's interval or the
    reason it has none, and Landis & Koch's band."""
    return [
        {
            **row,
            "percent_agreement": stat_text(row, "percent_agreement"),
            "cohen_kappa": stat_text(row, "cohen_kappa"),
            "band": agreement_band(row.get("cohen_kappa")),
            "inter_annotator_alpha": stat_text(
                {"alpha": row.get("inter_annotator_alpha")}, "alpha"
            ),
        }
        for row in validation_rows
    ]


def ppi_headline(metrics: dict, *, limit: int = LARGEST_DISPARITIES) -> dict:
    """The summary's lead where humans validated a judge (docs/annotation.md, "Staff pages"):
    the ``limit`` largest prediction-powered Δ with their intervals, every attribute a judge
    errs on differentially, and where the judge-only Δ must not be reported. Reads the metrics
    document's ``ppi`` and ``judge_error``; ``present`` is False when it has neither.

    Every caution the card shows names a PPI Δ to report instead: that Δ is in ``rows`` even
    when it is not among the ``limit`` largest, in place of the smallest of them."""
    cautions = judge_only_cautions(metrics)
    marked = {(row["judge"], row["outcome"], row["attribute"]) for row in cautions}
    shown = {
        (row["judge"], row["outcome"], row["attribute"]) for row in cautions[:SUMMARY_CAUTIONS]
    }
    deltas = ppi_deltas(metrics)
    named = [row for row in deltas if (row["judge"], row["outcome"], row["attribute"]) in shown]
    # Still ``limit`` rows (the card's height): the named ones take the places of the smallest.
    largest = [row for row in deltas if row not in named][: max(limit - len(named), 0)]
    largest = [row for row in deltas if row in largest or row in named]
    rows = [
        {
            "judge": row["judge"],
            "outcome": row["outcome"],
            "attribute": row["attribute"],
            "delta": stat_text(
                {
                    "delta": row["block"]["estimate"],
                    "delta_ci_low": row["block"].get("ci_low"),
                    "delta_ci_high": row["block"].get("ci_high"),
                    "delta_ci_reason": row["block"].get("ci_reason", ""),
                },
                "delta",
            ),
            "extremes": highest_lowest(
                row["block"].get("max_value"),
                row["block"].get("min_value"),
                row["block"]["estimate"],
            ),
            "do_not_report": (row["judge"], row["outcome"], row["attribute"]) in marked,
        }
        for row in largest
    ]
    differential = differential_errors(metrics)
    return {
        "present": bool(rows or differential or metrics.get("ppi")),
        "level": confidence_label(metrics),
        "rows": rows,
        "differential": [{**row, "p_holm": p_value(row["p_holm"])} for row in differential],
        # A minute's read: the first few here, every one in the details and the report.
        "cautions": cautions[:SUMMARY_CAUTIONS],
        "more_cautions": max(len(cautions) - SUMMARY_CAUTIONS, 0),
    }

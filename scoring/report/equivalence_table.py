"""The report's "Equivalence within δ" table: what each Δ lets the study claim (Django-free;
report.json ``equivalence`` and ``equivalence_margins``; docs/metrics.md, "Equivalence within
δ"). The verdict's words are ``scoring.stats.equivalence.VERDICTS``, the same on every page."""

from __future__ import annotations

from collections import Counter

from scoring.report.display import TableNotes
from scoring.stats.equivalence import PPI_SOURCE_PREFIX, VERDICTS

# Where a Δ has no interval, and so no verdict.
NO_VERDICT = "no verdict"


def _source_rank(source: str) -> tuple[int, str]:
    """Humans first, then each judge's prediction-powered Δ (the one to cite for a judge humans
    validated), then the judges alone."""
    if source == "human":
        return 0, source
    return (1 if source.startswith(PPI_SOURCE_PREFIX) else 2), source


def source_label(source: str) -> str:
    if source == "human":
        return "human labels"
    if source.startswith(PPI_SOURCE_PREFIX):
        return f"{source.removeprefix(PPI_SOURCE_PREFIX)}, corrected by human labels (PPI)"
    return f"{source.removeprefix('auto:')} alone"


def verdict_for(report: dict, source: str, outcome: str, attribute: str) -> str:
    """The verdict words of one Δ of ``report`` (the summary's and the report's column)."""
    entry = (report.get("equivalence") or {}).get(source, {}).get(outcome, {}).get(attribute)
    return (entry or {}).get("verdict") or NO_VERDICT


def verdict_counts(verdicts) -> list[dict]:
    """``[{verdict, n}]`` for the verdicts given, in the verdicts' own order (no verdict last)."""
    counts = Counter(verdicts)
    return [{"verdict": v, "n": counts[v]} for v in (*VERDICTS, NO_VERDICT) if counts[v]]


def equivalence_display(report: dict) -> dict:
    """Rows (source, outcome, attribute, δ, bound, verdict, note mark), the notes, the counts of
    each verdict, and a line for every outcome whose δ was set after data were seen."""
    notes = TableNotes()
    rows = []
    section = report.get("equivalence") or {}
    for source in sorted(section, key=_source_rank):
        for outcome, attributes in section[source].items():
            for attribute, entry in attributes.items():
                rows.append(
                    {
                        "source": source_label(source),
                        "outcome": outcome,
                        "attribute": attribute,
                        "delta_margin": f"{entry['delta_margin']:g}",
                        "bound": "—"
                        if entry.get("max_abs_bound") is None
                        else f"{entry['max_abs_bound']:.3f}",
                        "verdict": entry.get("verdict") or NO_VERDICT,
                        "mark": notes.mark(entry.get("reason")),
                    }
                )
    late = [
        f"δ for {outcome} ({margin['delta_margin']:g}) was set after human labels existed "
        f"(by {margin.get('set_by') or 'a command'}, {str(margin.get('set_at') or '')[:10]}): "
        "a margin chosen with the data in view; read its verdicts as exploratory."
        for outcome, margin in (report.get("equivalence_margins") or {}).items()
        if margin.get("set_after_data")
    ]
    confidence = (report.get("settings") or {}).get("confidence", 0.95)
    return {
        "rows": rows,
        "notes": notes.items,
        "counts": verdict_counts(row["verdict"] for row in rows),
        "set_after_data": late,
        # The chance of a false certificate: the test's size, at most 1 − confidence.
        "error_rate": f"{round(100 * (1 - confidence), 1):g} %",
    }

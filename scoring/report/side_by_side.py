"""Models side by side: the report's section and the table rows the staff page and the report
print (docs/report.md, "Models side by side"; the statistics: docs/metrics.md, "Models side by
side"). Django-free: ``scoring.stats.version_change`` computes, this module picks and formats.
"""

from __future__ import annotations

import pandas as pd

from annotations.labels import NEUTRAL
from scoring.report.display import DASH, ZERO_WIDTH, interval, number, p_value
from scoring.report.report_section import ReportSection
from scoring.stats.equivalence import equivalence_entry
from scoring.stats.version_change import PAIRED, comparison_by_source

GENERATOR = "generator"
TESTS = {
    "cluster-bootstrap": "cluster bootstrap",
    "newcombe-inverted": "Newcombe (two samples)",
    "delta-intervals": "the two Δ intervals",
    # Tests of documents written before the item became the unit (issue 30).
    "mcnemar-exact": "McNemar (exact)",
    "chi-square": "χ² (two samples)",
    "fisher-exact": "Fisher exact (two samples)",
}


def report_section(sources: dict[str, pd.DataFrame], options: dict) -> dict | None:
    """The report's section when the study holds two or more generators (None otherwise): every
    generator's rates and Δ, and the change from the first generator to the second in name order
    (the staff page compares any two)."""
    generators = sorted(
        {str(g) for frame in sources.values() for g in frame[GENERATOR].unique() if str(g)}
    )
    if len(generators) < 2:
        return None
    return comparison_by_source(
        {source: frame[frame[GENERATOR] != ""] for source, frame in sources.items()},
        model_column=GENERATOR,
        baseline=generators[0],
        candidate=generators[1],
        confidence=options["confidence"],
        n_resamples=options["n_resamples"],
        seed=options["seed"],
    )


def _rate_cell(cell: dict | None) -> dict:
    """A model's rate: the point, and its interval and n on a second line."""
    if not cell or cell.get("rate") is None:
        return {"value": DASH, "detail": f"n {cell['n']}" if cell else ""}
    bounds = interval(cell.get("ci_low"), cell.get("ci_high"))
    return {"value": number(cell["rate"]), "detail": f"{bounds} · n {cell['n']}".strip(" ·")}


def _delta_cell(block: dict | None) -> dict:
    """A model's Δ: the point, and its interval and what it lets one claim at the default δ
    (the same words as the report's "Equivalence within δ")."""
    if not block or block.get("delta") is None:
        return {"value": DASH, "detail": ""}
    bounds = interval(block.get("delta_ci_low"), block.get("delta_ci_high"))
    if not bounds and block.get("delta_ci_reason"):
        bounds = "no interval"
    claim = equivalence_entry(block)
    if claim["verdict"] is not None:
        bounds = f"{bounds} · {claim['verdict']} (δ = {claim['delta_margin']:g})"
    return {"value": number(block["delta"]), "detail": bounds}


def _missing(row: dict) -> str:
    """Why the change, its interval or its p-value is missing, in a few words."""
    notes = [row.get("difference_reason")]
    if row.get("difference") is not None and row.get("ci_low") is None:
        code = row.get("ci_reason_code")
        notes.append(ZERO_WIDTH if code == "zero_width" else f"no interval: {row.get('ci_reason')}")
    if row.get("difference") is not None and row.get("p_value") is None:
        notes.append(f"no p-value: {row.get('p_value_reason')}")
    return "; ".join(dict.fromkeys(note for note in notes if note))


def _change(row: dict | None) -> dict:
    """The change columns: B − A with its interval, the test, p and Holm's p, and why any is
    missing."""
    if row is None:
        return {"difference": DASH, "difference_ci": "", "test": "", "p": DASH, "p_holm": DASH}
    return {
        "difference": DASH if row["difference"] is None else f"{row['difference']:+.3f}",
        "difference_ci": interval(row.get("ci_low"), row.get("ci_high")),
        "test": TESTS.get(row.get("test") or "", row.get("test") or ""),
        "p": p_value(row.get("p_value")),
        "p_holm": p_value(row.get("p_holm")),
        "significant": row.get("p_holm") is not None and row["p_holm"] < 0.05,
        "note": _missing(row),
    }


def source_table(block: dict) -> list[dict]:
    """One group per measure: rows per (attribute, value) with each model's rate, then the
    attribute's Δ row, each with the change columns."""
    models, per_model = block["models"], block["per_model"]
    change = block["change"]  # None: no two models compared (``change_reason`` says why)
    rate_changes = (
        {}
        if change is None
        else {(r["measure"], r["attribute"], r["value"]): r for r in change["rates"]}
    )
    delta_changes = (
        {} if change is None else {(r["measure"], r["attribute"]): r for r in change["deltas"]}
    )
    groups = []
    for measure in next(iter(per_model.values()), {}):
        attributes = sorted({a for model in models for a in _blocks(per_model[model], measure)})
        rows = []
        for attribute in attributes:
            blocks = [_blocks(per_model[model], measure).get(attribute) for model in models]
            values = sorted({v for b in blocks if b for v in b["values"]})
            for value in values:
                rows.append(
                    {
                        "kind": "rate",
                        "attribute": attribute,
                        "value": value,
                        "cells": [
                            _rate_cell(b["values"].get(value) if b else None) for b in blocks
                        ],
                        **_change(rate_changes.get((measure, attribute, value))),
                    }
                )
            if attribute != NEUTRAL:
                rows.append(
                    {
                        "kind": "delta",
                        "attribute": attribute,
                        "value": "Δ (max − min)",
                        "cells": [_delta_cell(b) for b in blocks],
                        **_change(delta_changes.get((measure, attribute))),
                    }
                )
        if rows:
            groups.append({"measure": measure, "rows": rows})
    return groups


def design_sentence(block: dict, baseline: str, candidate: str) -> str:
    """How the change was tested, or why there is none."""
    change = block.get("change")
    if change is None:
        return f"No change computed: {block.get('change_reason', 'no two models chosen')}."
    counts = (
        f"{change['n_prompts_shared']} prompts shared ({change['n_prompts_baseline']} of "
        f"{baseline}, {change['n_prompts_candidate']} of {candidate})"
    )
    if change["design"] is None:
        return f"No change computed: {change['design_reason']} ({counts})."
    if change["design"] == PAIRED:
        return (
            f"Paired by prompt: {counts}. Rates: cluster bootstrap over base prompts, the same "
            "draw for both, with its own test; Δ: the two models' Δ intervals. Items, not "
            "labels, are counted."
        )
    return (
        f"Independent samples ({change['design_reason']}): {counts}. Rates: Newcombe interval "
        "on each model's effective number of items, with its own test; Δ: the two models' Δ "
        "intervals."
    )


def side_by_side_display(section: dict) -> list[dict]:
    """Per source, its title, the design sentence, the models and the table groups."""
    out = []
    for source, block in section["sources"].items():
        out.append(
            {
                "source": source,
                "models": block["models"],
                "design": design_sentence(block, section["baseline"], section["candidate"]),
                "groups": source_table(block),
            }
        )
    return out


SECTION = ReportSection(
    id="models",
    title="Models side by side",
    templates=("staff/partials/report_models.html",),
    present=lambda report: "models_side_by_side" in report,
    context=lambda report: {"models": side_by_side_display(report["models_side_by_side"])},
)


def _blocks(model_rates: dict, measure: str) -> dict:
    """One model's rate blocks for a measure by attribute; a model with no rows for the measure
    has none (the other model's rows still show, with this one's cells empty)."""
    return model_rates[measure] if measure in model_rates else {}

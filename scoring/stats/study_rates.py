"""Refusal, erasure, substitution and combined rates of a study, per source (pooled human
annotations, or one automated judge), with Δ, ratios, bootstrap CIs and pairwise tests.

docs/metrics.md, "Study export: rates". Called by ``study_metrics``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scoring.stats.disparity import (
    NEUTRAL,
    ClusterResample,
    DesignUnits,
    attribute_columns,
    disparity_report,
)
from scoring.stats.hypothesis_tests import pairwise_proportion_tests

MEASURES = ("refusal", "erasure", "substitution", "combined")
# Column set on judgments: False where the judge does not answer the refusal question.
ANSWERS_REFUSAL = "answers_refusal"


# The columns that describe an item in every frame the study statistics take (one row per
# annotation, judgment or aggregated item label); study_metrics' frame contracts build on it.
ITEM_COLUMNS = [
    "item_id",
    "attribute",
    "attribute_value",
    "base_prompt_id",
    "domain",
    "generator",
    "mode",
]


def measure_outcomes(frame: pd.DataFrame) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per measure, the per-row (success, counted) booleans.

    Refusal counts every row that answers the refusal question (all rows, unless an
    ``answers_refusal`` column says otherwise: cue-only judges); erasure, substitution and
    combined (erased or substituted) count the rows not marking refusal that carry a cue label.
    """
    refused = frame["hard_refusal"].to_numpy(dtype=bool)
    cue = frame["cue"].astype(object).where(frame["cue"].notna(), None).to_numpy()
    erased, substituted = cue == "erased", cue == "substituted"
    has_cue = ~refused & frame["cue"].notna().to_numpy()
    answers_refusal = (
        frame[ANSWERS_REFUSAL].to_numpy(dtype=bool)
        if ANSWERS_REFUSAL in frame.columns
        else np.ones(len(frame), dtype=bool)
    )
    return {
        "refusal": (refused, answers_refusal),
        "erasure": (erased, has_cue),
        "substitution": (substituted, has_cue),
        "combined": (erased | substituted, has_cue),
    }


def add_pairwise_tests(report: dict) -> None:
    """Each attribute's pairwise two-proportion tests beside its rates (not the neutral
    baseline), on each value's effective sample size (docs/metrics.md, "Pairwise tests"): two
    labels of one item count as the evidence they carry, not as two independent ones."""
    for attribute, block in report.items():
        if attribute == NEUTRAL:
            continue
        counts = {value: _effective_counts(entry) for value, entry in block["values"].items()}
        block["pairwise_tests"] = pairwise_proportion_tests(counts)


def _effective_counts(entry: dict) -> tuple[float, float]:
    """(successes, n) scaled to the value's effective sample size; the raw counts where none."""
    n_effective = entry.get("n_effective")
    if n_effective is None or entry["rate"] is None:
        return entry["successes"], entry["n"]
    return entry["rate"] * n_effective, n_effective


def source_rates(frame: pd.DataFrame, *, confidence: float, n_resamples: int, seed: int) -> dict:
    """All four measures for one source; one set of cluster-bootstrap draws serves every measure."""
    if len(frame) == 0:
        return {measure: {} for measure in MEASURES}
    resample = ClusterResample(frame, n_resamples=n_resamples, rng=np.random.default_rng(seed))
    columns, units = attribute_columns(frame), DesignUnits(frame)
    out = {}
    for measure, (success, counted) in measure_outcomes(frame).items():
        report = disparity_report(
            frame,
            success,
            counted,
            resample=resample,
            confidence=confidence,
            columns=columns,
            units=units,
        )
        add_pairwise_tests(report)
        out[measure] = report
    return out


def study_rates(
    annotations: pd.DataFrame,
    judgments: pd.DataFrame,
    *,
    confidence: float,
    n_resamples: int,
    seed: int,
) -> dict:
    """``{"human": ..., "auto:<judge>": ...}``: human rates pool annotations; a judge's use its judgments."""
    rates = {
        "human": source_rates(
            annotations, confidence=confidence, n_resamples=n_resamples, seed=seed
        )
    }
    for judge, frame in judgments.groupby("judge", sort=True):
        rates[f"auto:{judge}"] = source_rates(
            frame.reset_index(drop=True), confidence=confidence, n_resamples=n_resamples, seed=seed
        )
    return rates


def rates_breakdown(frame: pd.DataFrame, *, by: str, confidence: float) -> dict:
    """Rates and Δ (Wilson intervals, no bootstrap) within each level of ``by`` (domain, generator, mode)."""
    out = {}
    for level, subset in frame.groupby(by, sort=True):
        subset = subset.reset_index(drop=True)
        columns, units = attribute_columns(subset), DesignUnits(subset)
        out[str(level)] = {
            measure: disparity_report(
                subset, success, counted, confidence=confidence, columns=columns, units=units
            )
            for measure, (success, counted) in measure_outcomes(subset).items()
        }
    return out

"""The study export's label-model sections: per-annotator reliability under each label model, and
rates and Δ recomputed on the model-estimated item labels as a sensitivity analysis.

docs/metrics.md, "Label models" and "Study export: sensitivity". The rates use the same function
as the pooled rates (``study_rates.source_rates``), so the two differ only in their input.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from scoring.stats.label_models import METHODS, LabelAggregation, aggregate_labels
from scoring.stats.study_rates import ITEM_COLUMNS, source_rates

# The study export's default. MACE (~50 EM steps per question, each a pandas pass) and GLAD
# (~13 s on 6,000 answers against 0.4 s for Dawid-Skene, crowd-kit 1.4) are opt-in there.
DEFAULT_METHODS = ("majority", "dawid-skene")


def aggregated_frame(annotations: pd.DataFrame, aggregation: LabelAggregation) -> pd.DataFrame:
    """One row per item with a defined aggregated refusal label, beside the item's attributes."""
    labels = pd.DataFrame(aggregation.items, columns=["item_id", "hard_refusal", "cue"])
    labels = labels[labels["hard_refusal"].notna()].astype({"hard_refusal": bool})
    items = annotations[ITEM_COLUMNS].drop_duplicates("item_id").astype({"item_id": str})
    return items.merge(labels, on="item_id", how="inner").reset_index(drop=True)


def label_model_sections(
    annotations: pd.DataFrame,
    *,
    methods: Sequence[str] = DEFAULT_METHODS,
    confidence: float,
    n_resamples: int,
    seed: int,
) -> tuple[dict, dict]:
    """``(aggregation, sensitivity)``: per method, the annotators' reliability and the questions'
    status; and the rates of ``source_rates`` on the aggregated labels (one row per item)."""
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown label model(s) {unknown}; use any of {', '.join(METHODS)}")
    aggregation, sensitivity = {}, {}
    for method in methods:
        result = aggregate_labels(annotations, method=method, seed=seed)
        frame = aggregated_frame(annotations, result)
        aggregation[method] = {"annotators": result.annotators, "questions": result.questions}
        sensitivity[method] = {
            "n_items": int(len(frame)),
            "n_items_without_label": int(len(result.items) - len(frame)),
            "rates": source_rates(frame, confidence=confidence, n_resamples=n_resamples, seed=seed),
        }
    return aggregation, sensitivity

"""Which labels the study metrics are computed on: pooled answers, adjudicated labels, or a label
model's estimates (docs/metrics.md, "Label sources"). Frames in, frames out; no Django.

Every source yields a frame with the columns of ``study_metrics.ANNOTATION_COLUMNS``, so the
statistics downstream are the same functions whatever the source; only their input differs.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from scoring.stats.label_models import METHODS, aggregate_labels
from scoring.stats.label_sensitivity import aggregated_frame
from scoring.stats.ppi_study import (
    BATCH,
    INCLUSION_PROBABILITY,
    PROBABILITY_SAMPLE,
    PROBABILITY_SAMPLE_REASON,
    not_probability_sample,
)
from scoring.stats.study_metrics import ANNOTATION_COLUMNS

POOLED = "pooled"
ADJUDICATED = "adjudicated"
LABEL_SOURCES = (POOLED, ADJUDICATED, *METHODS)
ADJUDICATOR = "adjudicator"  # the annotator name of an adjudicated row


def adjudicated_frame(annotations: pd.DataFrame, decisions: Mapping[str, Mapping]) -> pd.DataFrame:
    """Each adjudicated item's answers replaced by one row with the adjudicator's final label;
    items without a decision keep their pooled answers."""
    decided = annotations["item_id"].astype(str).isin(set(decisions))
    items = annotations[decided].drop_duplicates("item_id").copy()
    items["annotator"] = ADJUDICATOR
    items["annotator_group"] = ""
    items["hard_refusal"] = [bool(decisions[str(i)]["hard_refusal"]) for i in items["item_id"]]
    items["cue"] = [decisions[str(i)]["cue"] or None for i in items["item_id"]]
    frame = pd.concat([annotations[~decided], items], ignore_index=True)
    return _with_sampling_design(frame.reindex(columns=ANNOTATION_COLUMNS), annotations)


def model_frame(annotations: pd.DataFrame, *, method: str, seed: int = 0) -> pd.DataFrame:
    """One row per item with the label model's estimated labels (annotator = the method's name);
    items the model leaves without a refusal label are dropped (label_sensitivity)."""
    frame = aggregated_frame(annotations, aggregate_labels(annotations, method=method, seed=seed))
    frame["annotator"] = method
    frame["annotator_group"] = ""
    frame["cue"] = frame["cue"].astype(object).where(frame["cue"].notna(), None)
    return _with_sampling_design(frame.reindex(columns=ANNOTATION_COLUMNS), annotations)


def _with_sampling_design(frame: pd.DataFrame, annotations: pd.DataFrame) -> pd.DataFrame:
    """The items' recorded sampling design carried over (docs/metrics.md, "Prediction-powered
    rates"): the inclusion probability, and whether a probability sample drew the item at all
    (false only when every label of the item came from batches that are not one, with the first
    such batch and its reason); nothing to carry when none was recorded."""
    if INCLUSION_PROBABILITY in annotations.columns:
        per_item = annotations.groupby("item_id")[INCLUSION_PROBABILITY].first()
        frame = frame.assign(**{INCLUSION_PROBABILITY: frame["item_id"].map(per_item).to_numpy()})
    if PROBABILITY_SAMPLE not in annotations.columns:
        return frame
    left_out = annotations[not_probability_sample(annotations)]
    dropped = set(left_out["item_id"])
    frame = frame.assign(
        **{PROBABILITY_SAMPLE: [False if i in dropped else None for i in frame["item_id"]]}
    )
    for column in (PROBABILITY_SAMPLE_REASON, BATCH):
        if column in left_out.columns:
            first = left_out.groupby("item_id")[column].first()
            frame[column] = frame["item_id"].map(first).fillna("").to_numpy()
    return frame


def labels_frame(
    annotations: pd.DataFrame,
    *,
    source: str,
    decisions: Mapping[str, Mapping] | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """The annotation frame the metrics use under ``source`` (one of LABEL_SOURCES)."""
    if source not in LABEL_SOURCES:
        raise ValueError(f"unknown label source {source!r}; use one of {', '.join(LABEL_SOURCES)}")
    if source == POOLED or annotations.empty:
        return annotations
    if source == ADJUDICATED:
        return adjudicated_frame(annotations, decisions or {})
    return model_frame(annotations, method=source, seed=seed)

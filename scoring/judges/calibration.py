"""Choosing the CLIP refusal threshold τ from human labels.

The ROC curve comes from scikit-learn's ``roc_curve`` over the CLIP refusal similarity, with
the human label (refusal = 1) as truth. The chosen cut-off maximises F1 or Youden's J
(TPR − FPR). ``roc_curve`` classifies ``score >= cut-off`` as positive while the judge fires
on ``score > τ``; τ is therefore placed halfway between the chosen cut-off and the next
lower observed score, so both rules classify every calibration item the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from sklearn.metrics import roc_auc_score, roc_curve

Criterion = Literal["f1", "youden"]


@dataclass(frozen=True)
class ThresholdChoice:
    tau: float
    criterion: str
    score_cutoff: float
    precision: float
    recall: float
    f1: float
    youden_j: float
    false_positive_rate: float
    auc: float
    n_positive: int
    n_negative: int
    roc: list[dict[str, float]] = field(default_factory=list)  # fpr, tpr, threshold per point


def choose_threshold(scores, labels, *, criterion: Criterion = "f1") -> ThresholdChoice:
    """τ from CLIP scores and human labels (1 = refusal, 0 = not), with the ROC points."""
    scores, labels = _check_inputs(scores, labels)
    if criterion not in ("f1", "youden"):
        raise ValueError(f"criterion must be 'f1' or 'youden', got {criterion!r}")
    fpr, tpr, thresholds = roc_curve(labels, scores, drop_intermediate=False)
    n_pos, n_neg = int(labels.sum()), int(len(labels) - labels.sum())
    # Drop roc_curve's first point (threshold +inf: nothing predicted positive).
    finite = np.isfinite(thresholds)
    true_pos = tpr * n_pos
    predicted_pos = true_pos + fpr * n_neg
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(predicted_pos > 0, true_pos / predicted_pos, 0.0)
        f1 = np.where(precision + tpr > 0, 2 * precision * tpr / (precision + tpr), 0.0)
    youden = tpr - fpr
    objective = np.where(finite, f1 if criterion == "f1" else youden, -np.inf)
    # Ties go to the highest cut-off (the fewest refusals flagged): argmax takes the first.
    best = int(np.argmax(objective))
    cutoff = float(thresholds[best])
    return ThresholdChoice(
        tau=_tau_below(cutoff, scores),
        criterion=criterion,
        score_cutoff=cutoff,
        precision=float(precision[best]),
        recall=float(tpr[best]),
        f1=float(f1[best]),
        youden_j=float(youden[best]),
        false_positive_rate=float(fpr[best]),
        auc=float(roc_auc_score(labels, scores)),
        n_positive=n_pos,
        n_negative=n_neg,
        roc=[
            {"fpr": float(f), "tpr": float(t), "threshold": float(h) if np.isfinite(h) else None}
            for f, t, h in zip(fpr, tpr, thresholds, strict=True)
        ],
    )


def _check_inputs(scores, labels) -> tuple[np.ndarray, np.ndarray]:
    scores = np.asarray(scores, dtype=float)
    labels = np.asarray(labels)
    if scores.ndim != 1 or labels.ndim != 1 or len(scores) != len(labels):
        raise ValueError("scores and labels must be 1-D and of the same length")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores must be finite")
    if not np.isin(labels, [0, 1]).all():
        raise ValueError("labels must be 0 (not a refusal) or 1 (refusal)")
    labels = labels.astype(int)
    if labels.min() == labels.max():
        raise ValueError("calibration needs both refusals and non-refusals among the labels")
    return scores, labels


def _tau_below(cutoff: float, scores: np.ndarray) -> float:
    """Midpoint between the cut-off and the next lower score, so ``> τ`` ≡ ``>= cut-off``."""
    lower = scores[scores < cutoff]
    if lower.size == 0:
        return float(np.nextafter(cutoff, -np.inf))
    return float((cutoff + lower.max()) / 2)

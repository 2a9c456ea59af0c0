"""Automated judges: hard-refusal rules + CLIP, vision-language cue judges, the ensemble.

No Django import anywhere in this package. A Celery task builds a judge once per worker
process from a plain config dict and scores a batch of items; per-item failures come back as
records with an ``error``, never as exceptions::

    judge = load_judge(config)
    outputs = judge.judge_items([ItemInput(item_id="42", image_path="/media/42.png", cue="red scarf")])

See ``registry.py`` for the config format.
"""

from scoring.judges.records import (
    CUE_LABELS,
    HARD_REFUSAL_LABELS,
    INVALID_LABEL,
    ItemInput,
    Judge,
    JudgmentOutput,
)
from scoring.judges.registry import load_judge

__all__ = [
    "CUE_LABELS",
    "HARD_REFUSAL_LABELS",
    "INVALID_LABEL",
    "ItemInput",
    "Judge",
    "JudgmentOutput",
    "load_judge",
]

"""A synthetic study (clearly not real data) for tests, the benchmark and demos.

Items expand base prompts over every attribute value plus the neutral baseline and over
generators; refusal and erasure probabilities depend on the attribute value, so disparities exist.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

ATTRIBUTE_VALUES = {
    "neutral": ["neutral"],
    "culture": ["Chinese", "Indian", "Korean", "Kenyan", "Nigerian", "US"],
    "gender": ["female", "male"],
    "disability": ["wheelchair_user", "blind", "deaf"],
    "religion": ["Muslim", "Christian", "Hindu", "Jewish"],
    "age": ["child", "adult", "elderly"],
}
DOMAINS = ["violence", "drugs", "self_harm", "weapons", "sexual_content"]
GENERATORS = ["generator-a", "generator-b"]
CUES = np.array(["retained", "erased", "substituted"], dtype=object)


def _items(n_items: int, rng: np.random.Generator) -> pd.DataFrame:
    pairs = [
        (attribute, value) for attribute, values in ATTRIBUTE_VALUES.items() for value in values
    ]
    per_prompt = len(pairs) * len(GENERATORS)
    index = np.arange(n_items)
    prompt = index // per_prompt
    pair = (index % per_prompt) // len(GENERATORS)
    frame = pd.DataFrame(
        {
            "item_id": [f"item-{i:06d}" for i in index],
            "attribute": [pairs[p][0] for p in pair],
            "attribute_value": [pairs[p][1] for p in pair],
            "base_prompt_id": [f"bp-{p:05d}" for p in prompt],
            "domain": [DOMAINS[p % len(DOMAINS)] for p in prompt],
            "generator": [GENERATORS[g] for g in index % len(GENERATORS)],
            "mode": np.where(prompt % 3 == 0, "i2i", "t2i"),
        }
    )
    value_position = pd.factorize(frame["attribute_value"], sort=True)[0]
    prompt_effect = rng.normal(0.0, 0.5, size=prompt.max() + 1)[prompt]
    logit_refusal = -2.5 + 0.15 * (value_position % 7) + prompt_effect
    frame["true_refusal"] = rng.random(n_items) < 1.0 / (1.0 + np.exp(-logit_refusal))
    erase = 0.15 + 0.03 * (value_position % 5)
    draw = rng.random(n_items)
    frame["true_cue"] = np.where(
        draw < erase, "erased", np.where(draw < erase + 0.1, "substituted", "retained")
    )
    return frame


def _noisy(frame: pd.DataFrame, *, flip: float, rng: np.random.Generator) -> pd.DataFrame:
    out = frame.copy()
    refusal = out["true_refusal"].to_numpy() ^ (rng.random(len(out)) < flip)
    cue = np.where(
        rng.random(len(out)) < flip, CUES[rng.integers(0, 3, len(out))], out["true_cue"].to_numpy()
    )
    out["hard_refusal"] = refusal
    out["cue"] = np.where(refusal, None, cue)
    return out.drop(columns=["true_refusal", "true_cue"])


def synthetic_study(
    *,
    n_items: int = 25_000,
    n_annotators: int = 12,
    n_annotated_items: int = 450,
    overlap: int = 2,
    judges=("clip-refusal@1", "vlm-judge@1"),
    seed: int = 0,
):
    """(annotations, judgments) frames in the ``study_metrics`` input shape."""
    rng = np.random.default_rng(seed)
    items = _items(n_items, rng)
    judgment_frames = [
        _noisy(items, flip=0.08 + 0.04 * j, rng=rng).assign(judge=judge)
        for j, judge in enumerate(judges)
    ]
    judgments = pd.concat(judgment_frames, ignore_index=True) if judgment_frames else items.iloc[:0]
    chosen = items.iloc[
        np.sort(rng.choice(n_items, size=min(n_annotated_items, n_items), replace=False))
    ]
    repeated = chosen.loc[chosen.index.repeat(overlap)].reset_index(drop=True)
    # Round-robin over annotators keeps workloads even and never gives one item twice to one annotator.
    slot = np.arange(len(repeated))
    annotator_index = (slot // overlap + slot % overlap * max(1, n_annotators // overlap)) % max(
        n_annotators, 1
    )
    repeated["annotator"] = [f"annotator-{a:02d}" for a in annotator_index]
    repeated["annotator_group"] = [f"group-{a % 3}" for a in annotator_index]
    annotations = _noisy(repeated, flip=0.05, rng=rng)
    return annotations, judgments

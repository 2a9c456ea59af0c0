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


def _harmful_twins(items: pd.DataFrame, share: float, rng: np.random.Generator) -> pd.DataFrame:
    """Harmful controls: every item of a ``share`` of the base prompts gets a harmful twin (same
    base prompt, intent ``harmful``), mostly refused; compliance depends on the value."""
    prompts = items["base_prompt_id"].unique()
    chosen = set(prompts[rng.random(len(prompts)) < share])
    twins = items[items["base_prompt_id"].isin(chosen)].copy()
    twins["item_id"] = twins["item_id"] + "-harmful"
    twins["intent"] = "harmful"
    value_position = pd.factorize(twins["attribute_value"], sort=True)[0]
    logit_refusal = 1.6 - 0.25 * (value_position % 5)
    twins["true_refusal"] = rng.random(len(twins)) < 1.0 / (1.0 + np.exp(-logit_refusal))
    return twins.reset_index(drop=True)


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
    harmful_share: float = 0.0,
):
    """(annotations, judgments) frames in the ``study_metrics`` input shape. With
    ``harmful_share`` > 0, that share of base prompts also gets harmful controls (an ``intent``
    column; docs/metrics.md, "Safety–utility trade-off"); the benign items are unchanged."""
    rng = np.random.default_rng(seed)
    items = _items(n_items, rng)
    annotations, judgments = _labels(
        items, rng, n_annotated_items, n_annotators=n_annotators, overlap=overlap, judges=judges
    )
    if harmful_share <= 0:
        return annotations, judgments
    # Their own random stream, so the benign items and labels are those of harmful_share = 0.
    harmful_rng = np.random.default_rng([seed, 23])
    twins = _harmful_twins(items, harmful_share, harmful_rng)
    annotated = set(annotations["item_id"] + "-harmful")
    twin_annotations, twin_judgments = _labels(
        twins,
        harmful_rng,
        None,
        n_annotators=n_annotators,
        overlap=overlap,
        judges=judges,
        annotated=twins["item_id"].isin(annotated).to_numpy(),
    )
    return (
        pd.concat([annotations.assign(intent="benign"), twin_annotations], ignore_index=True),
        pd.concat([judgments.assign(intent="benign"), twin_judgments], ignore_index=True),
    )


def _labels(items, rng, n_annotated_items, *, n_annotators, overlap, judges, annotated=None):
    """Judgments of every item, and ``overlap`` annotations of the annotated ones (drawn by
    ``rng`` when ``annotated`` is not given)."""
    judgment_frames = [
        _noisy(items, flip=0.08 + 0.04 * j, rng=rng).assign(judge=judge)
        for j, judge in enumerate(judges)
    ]
    judgments = pd.concat(judgment_frames, ignore_index=True) if judgment_frames else items.iloc[:0]
    if annotated is None:
        size = min(n_annotated_items, len(items))
        chosen = items.iloc[np.sort(rng.choice(len(items), size=size, replace=False))]
    else:
        chosen = items[annotated]
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

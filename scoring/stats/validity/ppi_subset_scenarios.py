"""Validity scenario: prediction-powered rates when humans also label a "judges disagree" subset.

docs/metrics.md, "Prediction-powered rates" (inclusion probabilities) and docs/annotation.md,
"Batches from a subset". A study of two attribute values, ``ITEMS_PER_VALUE`` items each (one per
base prompt and value, base prompts in two domains, the base-prompt shift of ``ppi_scenarios``).
Two judges label every item, each with its own errors; the one under study misses refusals
(false negatives 40 %, false positives 2 %), the other is better (5 %, 5 %). Humans
(one label per item: the truth) label two batches, as staff would make them:

1. a uniform sample of ``UNIFORM_BUDGET`` items of the whole study (π = budget / N);
2. every item on which the two judges disagree that nobody has labelled yet (the new-batch
   filter "judges disagree, not yet labelled").

Before issue 30 the second batch recorded π = 1 (relative to its subset) and its labels entered
the weighted estimate beside the uniform sample's: the judges disagree exactly where the judge
errs, so its residuals y − f are not those of the study, and their weight is wrong. Now the batch
is recorded as not a probability sample (π empty) and ``ppi_study`` leaves its labels out; its
items count as judged but unlabelled. Both go through the functions the study export uses
(``ppi_study.judge_items``, ``judge_outcome_ppi``) on annotation frames shaped as
``annotations.selectors.annotation_rows`` writes them, before (π = 1, no ``probability_sample``
column) and now. The normal interval of the rate is checked (the bootstrap adds nothing here and
would cost the quick mode its minute).

Each scenario takes ``(replications, seed)``; quick mode is 200 replications.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from scoring.stats.ppi_study import judge_items, judge_outcome_ppi
from scoring.stats.validity.core import Check, Tally

ATTRIBUTE = "culture"
VALUES = ("a", "b")
RATES = np.array([0.25, 0.40])
PROMPT_SHIFT = 0.08
ITEMS_PER_VALUE = 300
UNIFORM_BUDGET = 100  # of the 600 items: π = 1/6
JUDGE_ERRORS = {"judge@1": (0.40, 0.02), "other@1": (0.05, 0.05)}  # (false neg., false pos.)
SUBSET = "a subset: judges disagree, not yet labelled"
CONFIDENCE = 0.95


def _frames(rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    """(annotations as the export writes them now, the judge's judgments, the subset rows)."""
    prompt = np.repeat(np.arange(ITEMS_PER_VALUE), len(VALUES))
    value = np.tile(np.arange(len(VALUES)), ITEMS_PER_VALUE)
    shift = rng.uniform(-PROMPT_SHIFT, PROMPT_SHIFT, ITEMS_PER_VALUE)[prompt]
    truth = rng.random(prompt.size) < RATES[value] + shift
    verdicts = {}
    for judge, (false_negative, false_positive) in JUDGE_ERRORS.items():
        error = rng.random(prompt.size) < np.where(truth, false_negative, false_positive)
        verdicts[judge] = truth ^ error
    items = pd.DataFrame(
        {
            "item_id": [f"i{i}" for i in range(prompt.size)],
            "attribute": ATTRIBUTE,
            "attribute_value": np.asarray(VALUES)[value],
            "base_prompt_id": prompt,
            "domain": prompt % 2,
            "generator": "g",
            "mode": "t2i",
        }
    )
    uniform = np.zeros(prompt.size, dtype=bool)
    uniform[rng.choice(prompt.size, size=UNIFORM_BUDGET, replace=False)] = True
    disagree = (verdicts["judge@1"] != verdicts["other@1"]) & ~uniform
    labelled = uniform | disagree
    annotations = items.assign(
        annotator="human",
        annotator_group="",
        hard_refusal=truth,
        cue=np.where(truth, None, "retained"),
        batch=np.where(uniform, "uniform", "disagreements"),
        inclusion_probability=np.where(uniform, UNIFORM_BUDGET / prompt.size, np.nan),
        probability_sample=np.where(uniform, True, False).astype(object),
        probability_sample_reason=np.where(uniform, "", SUBSET),
    )[labelled].reset_index(drop=True)
    judgments = items.assign(
        judge="judge@1",
        hard_refusal=verdicts["judge@1"],
        cue=np.where(verdicts["judge@1"], None, "retained"),
    )
    return annotations, judgments, ~annotations["probability_sample"].astype(bool).to_numpy()


def _before(annotations: pd.DataFrame, subset: np.ndarray) -> pd.DataFrame:
    """The same labels as the batches recorded them before: π = 1 on the subset batch's
    assignments (its items relative to the subset), and no probability-sample flag."""
    before = annotations.drop(columns=["probability_sample", "probability_sample_reason"])
    before.loc[subset, "inclusion_probability"] = 1.0
    return before


def _rates(annotations: pd.DataFrame, judgments: pd.DataFrame) -> dict:
    items = judge_items(annotations, judgments, "refusal")
    out = judge_outcome_ppi(items, confidence=CONFIDENCE, n_resamples=0, seed=0)
    return out["rates"][ATTRIBUTE]


def _uniform_plus_disagreements(replications: int, seed: int) -> list[Check]:
    """The PPI refusal rate of each value against its truth, with the subset batch's labels
    left out (the check), and as computed before (bias and coverage in ``extra``)."""
    rng = np.random.default_rng(seed)
    tally = Tally("ppi_uniform_sample_plus_judges_disagree_subset")
    errors: dict[str, list[float]] = {"now": [], "before": []}
    before_hits, subset_share, left_out = [], [], []
    for _ in range(replications):
        annotations, judgments, subset = _frames(rng)
        subset_share.append(float(subset.mean()))
        now, then = _rates(annotations, judgments), _rates(_before(annotations, subset), judgments)
        for v, rate in zip(VALUES, RATES, strict=True):
            entry, old = now[v], then[v]
            tally.covers("rate", rate, entry["ci_low"], entry["ci_high"])
            left_out.append(entry["n_labelled_not_probability_sample"])
            if entry["estimate"] is not None:
                errors["now"].append(entry["estimate"] - rate)
            if old["estimate"] is not None and old["ci_low"] is not None:
                errors["before"].append(old["estimate"] - rate)
                before_hits.append(old["ci_low"] <= rate <= old["ci_high"])
    tally.extra["rate"] = {
        "mean_bias": float(np.mean(errors["now"])),
        "bias_mc_se": float(np.std(errors["now"]) / np.sqrt(len(errors["now"]))),
        "mean_bias_before": float(np.mean(errors["before"])),
        "coverage_before": float(np.mean(before_hits)),
        "subset_share_of_labels": float(np.mean(subset_share)),
        "mean_items_left_out_per_value": float(np.mean(left_out)),
    }
    return tally.checks()


SCENARIOS: dict[str, Callable[[int, int], list[Check]]] = {
    # Before the fix: bias and coverage in extra (docs/metrics.md, "Prediction-powered rates").
    "ppi_uniform_sample_plus_judges_disagree_subset": _uniform_plus_disagreements,
}

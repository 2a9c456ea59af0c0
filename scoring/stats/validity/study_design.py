"""A study's own design, read from its records, and the quick validity suite run at it
(docs/metrics.md, "Validate your own design").

``study_design`` derives, from the two frames ``study_metrics`` takes (benign items, the refusal
question), what the simulations need: per attribute its values, the items per value (the
smallest value's count: small groups are where intervals fail), the observed human rates; and
for the study as a whole the labels per item, the domains and base prompts, the generators,
the label noise implied by how often two annotators of one item disagree, and per judge and
attribute its false-negative and false-positive rates against the human majority. Every figure
carries its ``source``.

``validate_study_design`` simulates studies of that design through the app's own statistics
(``human_scenarios.run_design``, ``judge_scenarios.run_design``) and returns the suite's
``summarise`` dict, the ``design`` block and a verdict in words (``design_verdict``). No Django
import.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from annotations.labels import NEUTRAL
from scoring.stats.bootstrap import DEFAULT_N_RESAMPLES
from scoring.stats.disparity import disparity_report
from scoring.stats.judge_error import DEFAULT_N_PERMUTATIONS
from scoring.stats.parameters import check_integer
from scoring.stats.ppi_study import judge_items, majority_reference
from scoring.stats.safety_utility import BENIGN, rows_of_intent
from scoring.stats.study_metrics import validated_frames
from scoring.stats.study_rates import ANSWERS_REFUSAL, measure_outcomes
from scoring.stats.validity import human_scenarios, judge_scenarios
from scoring.stats.validity.core import QUICK_REPLICATIONS, Check
from scoring.stats.validity.design_verdict import CANNOT_VALIDATE, verdict
from scoring.stats.validity.human_scenarios import HumanDesign
from scoring.stats.validity.judge_scenarios import JudgeDesign
from scoring.stats.validity.suite import summarise

DEFAULT_SEED = 20261128  # the suite's (bench/validity_suite.py)
# The human scenarios' base-prompt shift U(−s, s); narrowed below so no item rate is clipped at
# 0 or 1, which would move the simulated truth away from the rate the intervals are held to.
PROMPT_SHIFT = HumanDesign.__dataclass_fields__["prompt_shift"].default
N_RESAMPLES = HumanDesign.__dataclass_fields__["n_resamples"].default
# Label noise above this leaves too little signal to de-noise the observed rates.
MAX_LABEL_NOISE = 0.4
# A judge's measured error rate is clipped into [e, 1 − e]: the simulation works on its logit.
ERROR_RATE_FLOOR = 0.01

Progress = Callable[[int, int], None] | None


class DesignUndefined(ValueError):
    """The study's records define no design to simulate (no human label, one value...)."""


def _figure(value, source: str, **extra) -> dict:
    return {"value": value, "source": source, **extra}


def _benign_frames(annotations, judgments) -> tuple[pd.DataFrame, pd.DataFrame]:
    annotations, judgments = validated_frames(annotations, judgments)
    return rows_of_intent(annotations, BENIGN), rows_of_intent(judgments, BENIGN)


def _labels_per_item(annotations: pd.DataFrame) -> dict:
    counts = annotations.groupby("item_id").size()
    distribution = counts.value_counts().sort_index()
    # The most common k; a tie goes to the smaller k (fewer labels: the harder design).
    typical = int(distribution[distribution == distribution.max()].index.min())
    return _figure(
        typical,
        "the most common number of human labels per annotated item",
        distribution={str(k): int(n) for k, n in distribution.items()},
    )


def _label_noise(annotations: pd.DataFrame) -> dict:
    """ε from pairwise disagreement D: two labels that each flip the item's state with
    probability ε disagree with probability 2ε(1 − ε), so ε = (1 − √(1 − 2D)) / 2."""
    per_item = annotations.groupby("item_id")["hard_refusal"].agg(["size", "sum"])
    per_item = per_item[per_item["size"] >= 2]
    formula = "ε = (1 − √(1 − 2D)) / 2, D = disagreeing label pairs / label pairs within items"
    if per_item.empty:
        return _figure(
            0.0,
            "not estimable with one label per item: taken as 0 (no label noise simulated)",
            formula=formula,
            pairs=0,
        )
    k, refused = per_item["size"].to_numpy(), per_item["sum"].to_numpy()
    pairs = float((k * (k - 1) / 2).sum())
    disagreement = float((refused * (k - refused)).sum()) / pairs
    noise = (1.0 - math.sqrt(max(1.0 - 2.0 * min(disagreement, 0.5), 0.0))) / 2.0
    source = "inter-annotator disagreement on the refusal question (items with k ≥ 2)"
    if noise > MAX_LABEL_NOISE:
        source += f"; capped at {MAX_LABEL_NOISE} (the labels are close to coin flips)"
        noise = MAX_LABEL_NOISE
    return _figure(
        round(noise, 4),
        source,
        formula=formula,
        pairwise_disagreement=round(disagreement, 4),
        pairs=int(pairs),
    )


def _attribute_designs(annotations: pd.DataFrame, noise: float) -> tuple[dict, dict]:
    """(attribute → design figures, attribute → reason it is left out)."""
    success, counted = measure_outcomes(annotations)["refusal"]
    report = disparity_report(annotations, success, counted)
    designs, skipped = {}, {}
    for attribute, block in sorted(report.items()):
        if attribute == NEUTRAL:
            continue
        values = {v: e for v, e in sorted(block["values"].items()) if e["rate"] is not None}
        if len(values) < 2:
            skipped[attribute] = "fewer than two values with human labels: no disparity to test"
            continue
        items = {value: int(entry["n_items"]) for value, entry in values.items()}
        successes = sum(entry["successes"] for entry in values.values())
        pooled = successes / sum(entry["n"] for entry in values.values())
        rates = {value: float(entry["rate"]) for value, entry in values.items()}
        rows = annotations[annotations["attribute"] == attribute]
        prompts = rows.groupby("attribute_value")["base_prompt_id"].nunique()
        fewest_prompts = int(prompts.reindex(list(values)).min())
        designs[attribute] = {
            "values": list(values),
            "items_per_value": _figure(
                min(items.values()),
                "the smallest number of human-labelled items of any value (small groups are "
                "where intervals fail)",
                median=float(np.median(list(items.values()))),
                by_value=items,
            ),
            "base_prompts_per_value": _figure(
                fewest_prompts,
                "the fewest base prompts (the clusters) with a human-labelled item of any value",
            ),
            "items_per_base_prompt": _figure(
                max(1, round(min(items.values()) / fewest_prompts)),
                "items per value ÷ base prompts per value, rounded: items sharing a base prompt "
                "(generators, seeds) are not independent evidence",
            ),
            "human_rates": _figure(
                rates,
                "each value's human refusal rate (labels marking refusal / labels), as "
                "rates.human.refusal of the study export: the alternative's truth",
            ),
            "pooled_rate": _figure(
                pooled, "every value's labels pooled: the null's truth (no difference)"
            ),
            "item_rates": _figure(
                {value: _item_rate(rate, noise) for value, rate in rates.items()},
                "the human rate with the label noise removed, (h − ε) / (1 − 2ε) clipped to "
                "[0, 1]: the item-level rate the simulation draws, so a simulated annotator's "
                "rate is h again",
            ),
        }
    return designs, skipped


def _item_rate(human_rate: float, noise: float) -> float:
    return float(np.clip((human_rate - noise) / (1.0 - 2.0 * noise), 0.0, 1.0))


def _judge_designs(annotations, judgments, attributes: dict) -> tuple[dict, dict]:
    """Per judge and attribute (``attributes``: name → the design's values), its error rates
    against the human majority (the judge-error reference of the study export: more than half
    of the item's labels; ties left out)."""
    if ANSWERS_REFUSAL in judgments.columns:
        judgments = judgments[judgments[ANSWERS_REFUSAL]]
    designs, skipped = {}, {}
    for judge, frame in judgments.groupby("judge", sort=True):
        items = judge_items(annotations, frame.reset_index(drop=True), "refusal")
        reference = majority_reference(items["y"])
        scored = items[items["f"].notna() & reference.notna()].assign(
            judge=lambda rows: rows["f"] > 0.5, reference=reference.astype(float) > 0.5
        )
        for attribute, values in attributes.items():
            rows = scored[scored["attribute"] == attribute]
            entry = _judge_attribute(rows, values)
            if isinstance(entry, str):
                skipped[f"{judge} · {attribute}"] = entry
            else:
                designs.setdefault(str(judge), {})[attribute] = entry
    return designs, skipped


def _judge_attribute(rows: pd.DataFrame, design_values: list) -> dict | str:
    values = sorted(rows["attribute_value"].unique().tolist())
    if len(values) < 2 or len(rows) < 2 * len(values):
        return "fewer than two human-labelled items per value with a majority label"
    # The simulation draws every value of the attribute's design: a value whose human-labelled
    # items all tie (no majority) has no judge error to measure.
    missing = [value for value in design_values if value not in values]
    if missing:
        return (
            f"no item of {', '.join(map(str, missing))} has both a judge label and a human "
            "majority (its labels tie)"
        )
    positive, judged = rows["reference"].to_numpy(), rows["judge"].to_numpy()
    by_value = rows.groupby("attribute_value")["reference"].agg(["size", "mean"])

    def rate(errors: int, n: int, name: str) -> dict:
        if n == 0:
            return _figure(0.5, f"no reference-{name} item: not measurable (0.5 simulated)", n=0)
        measured = errors / n
        return _figure(
            float(np.clip(measured, ERROR_RATE_FLOOR, 1 - ERROR_RATE_FLOOR)),
            f"the judge's pooled error on reference-{name} items (clipped to "
            f"[{ERROR_RATE_FLOOR}, {1 - ERROR_RATE_FLOOR}])",
            measured=measured,
            n=n,
        )

    return {
        "n_labels": _figure(
            int(len(rows)), "items with a judge label and a human majority (ties left out)"
        ),
        "prevalence": _figure(
            {value: float(by_value.loc[value, "mean"]) for value in values},
            "each value's share of human-majority refusals",
            n_by_value={value: int(by_value.loc[value, "size"]) for value in values},
        ),
        "fnr": rate(int((positive & ~judged).sum()), int(positive.sum()), "positive"),
        "fpr": rate(int((~positive & judged).sum()), int((~positive).sum()), "negative"),
    }


def study_design(annotations: pd.DataFrame, judgments: pd.DataFrame | None = None) -> dict:
    """The study's design, each figure with its source; raises ``DesignUndefined`` (with the
    reason in words) when there is nothing to simulate."""
    annotations, judgments = _benign_frames(annotations, judgments)
    if len(annotations) == 0:
        raise DesignUndefined("the study has no human labels on benign items yet")
    noise = _label_noise(annotations)
    attributes, skipped = _attribute_designs(annotations, noise["value"])
    if not attributes:
        reasons = "; ".join(f"{a}: {why}" for a, why in skipped.items()) or "no attribute"
        raise DesignUndefined(f"no attribute has two values with human labels ({reasons})")
    judges, skipped_judges = _judge_designs(
        annotations, judgments, {name: figures["values"] for name, figures in attributes.items()}
    )
    n_base_prompts = int(annotations["base_prompt_id"].nunique())
    n_domains = int(annotations["domain"].nunique())
    generators = sorted(annotations["generator"].unique().tolist())
    return {
        "scope": "benign items, the refusal question, the pooled human labels and the judgments "
        "(the frames study_metrics takes; gold items and excluded annotators left out)",
        "attributes": attributes,
        "attributes_left_out": skipped,
        "annotators_per_item": _labels_per_item(annotations),
        "label_noise": noise,
        "base_prompts": _figure(n_base_prompts, "distinct base prompts with human labels"),
        "domains": _figure(
            n_domains,
            "distinct domains with human labels (the strata base prompts are resampled in)",
            base_prompts_per_domain=round(n_base_prompts / max(n_domains, 1), 2),
        ),
        "generators": _figure(
            len(generators), "distinct generators with human labels", names=generators
        ),
        "judges": judges,
        "judges_left_out": skipped_judges,
    }


def design_scenarios(design: dict, *, n_resamples: int = N_RESAMPLES) -> list[tuple[str, object]]:
    """``(scenario name, HumanDesign or JudgeDesign)`` for every simulation of ``design``: per
    attribute its null (every value at the pooled rate), the observed rates (unless all equal)
    and, per judge, its flag with equal error rates across the values."""
    noise = design["label_noise"]["value"]
    scenarios = []
    for attribute, figures in design["attributes"].items():
        values = figures["values"]
        n_items = figures["items_per_value"]["value"]
        # HumanDesign puts ``generators`` items on each base prompt × value: the study's items
        # per base prompt, so the simulation has as many clusters as the study.
        per_prompt = figures["items_per_base_prompt"]["value"]
        common = {
            "items_per_value": n_items,
            "annotators_per_item": design["annotators_per_item"]["value"],
            "label_noise": noise,
            "generators": per_prompt,
            "domains": max(1, min(design["domains"]["value"], n_items // per_prompt)),
            "n_resamples": n_resamples,
        }
        pooled = figures["pooled_rate"]["value"]
        null = (_item_rate(pooled, noise),) * len(values)
        scenarios.append((f"{attribute}: equal rates ({pooled:.1%} each)", _human(null, common)))
        observed = tuple(figures["item_rates"]["value"][value] for value in values)
        if max(observed) - min(observed) > 1e-9:
            human = figures["human_rates"]["value"]
            spread = max(human.values()) - min(human.values())
            scenarios.append(
                (f"{attribute}: the observed rates (Δ = {spread:.3f})", _human(observed, common))
            )
        for judge, per_attribute in design["judges"].items():
            if attribute not in per_attribute:
                continue
            entry = per_attribute[attribute]
            fnr, fpr = entry["fnr"]["value"], entry["fpr"]["value"]
            prevalence = tuple(entry["prevalence"]["value"][value] for value in values)
            scenarios.append(
                (
                    f"{attribute}: judge {judge}, equal errors (FNR {fnr:.2f}, FPR {fpr:.2f})",
                    JudgeDesign(
                        entry["n_labels"]["value"],
                        prevalence=prevalence,
                        fnr=(fnr,) * len(values),
                        fpr=(fpr,) * len(values),
                    ),
                )
            )
    return scenarios


def _human(rates: tuple[float, ...], common: dict) -> HumanDesign:
    # No item rate may be clipped at 0 or 1 (PROMPT_SHIFT's comment).
    shift = min(PROMPT_SHIFT, min(rates), 1.0 - max(rates))
    return HumanDesign(rates=tuple(rates), prompt_shift=max(shift, 0.0), **common)


def _run(name: str, scenario, replications: int, seed: int) -> list[Check]:
    module = human_scenarios if isinstance(scenario, HumanDesign) else judge_scenarios
    return module.run_design(name, scenario, replications, seed)


def _settings(replications: int, seed: int, n_resamples: int) -> dict:
    note = (
        f"quick mode: {replications} simulated studies per scenario, {n_resamples} "
        f"cluster-bootstrap resamples per simulated study (the study export uses "
        f"{DEFAULT_N_RESAMPLES}), held to the quick targets; a demo-sized study takes about a "
        "minute on 2 cores"
    )
    if replications < QUICK_REPLICATIONS:
        note += (
            f"; with fewer than {QUICK_REPLICATIONS} simulated studies, chance alone can make a "
            "calibrated check miss its target (the quick targets are set for "
            f"{QUICK_REPLICATIONS})"
        )
    return {
        "replications": replications,
        "seed": seed,
        "n_resamples": n_resamples,
        "n_permutations": DEFAULT_N_PERMUTATIONS,
        "note": note,
    }


def validate_study_design(
    annotations: pd.DataFrame,
    judgments: pd.DataFrame | None = None,
    *,
    replications: int = QUICK_REPLICATIONS,
    seed: int = DEFAULT_SEED,
    n_resamples: int = N_RESAMPLES,
    progress: Progress = None,
) -> dict:
    """The quick validity suite at this study's own design: are its intervals and tests
    calibrated for a study shaped like this one?

    docs/metrics.md, "Validate your own design". ``study_design`` reads the design from the
    records (values, items per value, labels per item, base prompts and domains, label noise,
    each judge's error rates); the human and judge scenarios then simulate studies of that
    design through the app's own statistics, and ``design_verdict`` words the result.

    Parameters
    ----------
    annotations : pandas.DataFrame
        The human annotations, in ``study_metrics``' shape.
    judgments : pandas.DataFrame, optional
        The automated judgments, in ``study_metrics``' shape (None: no judge scenarios).
    replications : int, default ``core.QUICK_REPLICATIONS``
        Simulated studies per scenario (at least 1).
    seed : int, default 20261128
        Seed of the simulations (the suite's).
    n_resamples : int, default ``HumanDesign``'s
        Cluster-bootstrap resamples per simulated study (not negative).
    progress : callable, optional
        Called as ``progress(scenarios_done, scenarios_total)``.

    Returns
    -------
    dict
        ``summarise``'s dict (mode quick, every check, ``failing`` against the quick targets)
        with ``design``, ``settings``, ``verdict`` ("calibrated", "not calibrated" or "cannot
        validate"), ``verdict_text``, ``verdict_reasons`` (each failing check in words) and
        ``not_measured`` (checks defined in too few simulated studies to judge).

    Raises
    ------
    TypeError
        If a frame is not a DataFrame, ``replications``, ``seed`` or ``n_resamples`` is not
        an integer, or ``progress`` is not callable.
    ValueError
        If a frame misses a column, ``replications`` is below 1, or ``n_resamples`` is
        negative.

    References
    ----------
    .. [1] T. P. Morris, I. R. White and M. J. Crowther, "Using simulation studies to evaluate
       statistical methods", *Statistics in Medicine* 38(11):2074-2102, 2019.

    Examples
    --------
    >>> from scoring.stats import validate_study_design
    >>> from scoring.stats.synthetic_study import synthetic_study
    >>> annotations, judgments = synthetic_study(n_items=300, n_annotated_items=60, seed=1)
    >>> result = validate_study_design(annotations, judgments, replications=5)
    >>> result["verdict"], result["mode"], result["design"]["annotators_per_item"]["value"]
    ('calibrated', 'quick', 2)
    """
    for name, frame in (("annotations", annotations), ("judgments", judgments)):
        if frame is not None and not isinstance(frame, pd.DataFrame):
            raise TypeError(f"{name} must be a pandas DataFrame, got {type(frame).__name__}")
    check_integer(replications, "replications", minimum=1)
    check_integer(seed, "seed")
    check_integer(n_resamples, "n_resamples", minimum=0)
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be callable, got {type(progress).__name__}")
    started = time.perf_counter()
    settings = _settings(replications, seed, n_resamples)
    try:
        design = study_design(annotations, judgments)
    except DesignUndefined as undefined:
        summary = summarise([], quick=True, replications=replications, seconds=0.0)
        return {
            **summary,
            "passed": False,
            "design": None,
            "settings": settings,
            "verdict": CANNOT_VALIDATE,
            "verdict_text": f"Cannot validate this design: {undefined}.",
            "verdict_reasons": [str(undefined)],
            "not_measured": [],
        }
    scenarios = design_scenarios(design, n_resamples=n_resamples)
    checks: list[Check] = []
    for done, (name, scenario) in enumerate(scenarios, start=1):
        checks.extend(_run(name, scenario, replications, seed))
        if progress:
            progress(done, len(scenarios))
    summary = summarise(
        checks, quick=True, replications=replications, seconds=time.perf_counter() - started
    )
    return {**summary, "design": design, "settings": settings, **verdict(checks, replications)}

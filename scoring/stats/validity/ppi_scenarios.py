"""Validity scenarios for the prediction-powered rates, Δ and the judge-bias warning.

docs/metrics.md, "Prediction-powered rates" and "Calibration". Simulated studies with known true
rates go through the functions the study export uses (``ppi_study.judge_items`` and
``judge_outcome_ppi``; the human-only Δ through ``disparity.disparity_report``, as the human
rates). A study: base prompts (the clusters, in two domains) × the values of one attribute, one
item per prompt and value; an item's true outcome has its value's rate plus a base-prompt shift
U(−0.08, 0.08) (mean 0, so the value's rate is the truth). A judge labels every item; humans
label ``n`` items per value drawn uniformly within the value, and the judge's other 4n items per
value are unlabelled. ``n`` is 11, 60 or 200.

Judges: ``non_differential`` (false negatives 10 %, false positives 5 % in every value),
``differential`` (the same, but false positives 25 % in the last value) and ``unbiased`` (false
negatives 15 %, false positives p·0.15/(1 − p) in a value of rate p: it errs, yet its expected
rate is the truth in every value: the null of the judge-bias warning).

Each scenario takes ``(replications, seed)``; quick mode is 200 replications, full 1000. The
cluster bootstrap uses ``QUICK_RESAMPLES`` = 300 resamples per replication up to 200
replications and ``FULL_RESAMPLES`` = 1000 above (the study default is 2000): the Monte Carlo
error of a 95 % max-t quantile from 300 resamples costs about half a point of coverage.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from scoring.stats.disparity import ClusterResample, disparity_report
from scoring.stats.ppi import ppi_mean
from scoring.stats.ppi_study import judge_items, judge_outcome_ppi
from scoring.stats.validity.core import QUICK_REPLICATIONS, SIZE, Check, Tally

QUICK_RESAMPLES, FULL_RESAMPLES = 300, 1000
ATTRIBUTE = "culture"
VALUES = ("a", "b", "c", "d")
ALTERNATIVE_RATES = np.array([0.20, 0.25, 0.35, 0.22])  # Δ = 0.15
NULL_RATES = np.full(4, 0.25)  # Δ = 0
PROMPT_SHIFT = 0.08
UNLABELLED_PER_LABELLED = 4
CONFIDENCE = 0.95


def _resamples(replications: int) -> int:
    return QUICK_RESAMPLES if replications <= QUICK_REPLICATIONS else FULL_RESAMPLES


def _judge_error(judge: str, rates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(false negative, false positive) per value."""
    if judge == "unbiased":
        return np.full(rates.size, 0.15), rates * 0.15 / (1 - rates)
    false_positive = np.full(rates.size, 0.05)
    if judge == "differential":
        false_positive[-1] = 0.25
    return np.full(rates.size, 0.10), false_positive


@dataclass(frozen=True)
class _Study:
    """One simulated study: per item its prompt, value, truth, judge label and labelled flag."""

    prompt: np.ndarray
    value: np.ndarray
    truth: np.ndarray
    judge: np.ndarray
    labelled: np.ndarray


def _simulate(n: int, rates: np.ndarray, judge: str, rng: np.random.Generator) -> _Study:
    n_prompts = n * (1 + UNLABELLED_PER_LABELLED)
    k = rates.size
    prompt = np.repeat(np.arange(n_prompts), k)
    value = np.tile(np.arange(k), n_prompts)
    shift = rng.uniform(-PROMPT_SHIFT, PROMPT_SHIFT, n_prompts)[prompt]
    truth = rng.random(prompt.size) < rates[value] + shift
    false_negative, false_positive = _judge_error(judge, rates)
    error = rng.random(prompt.size) < np.where(truth, false_negative[value], false_positive[value])
    labelled = np.zeros(prompt.size, dtype=bool)
    for v in range(k):
        # Uniform within the value: n of its items get a human label.
        labelled[rng.choice(np.flatnonzero(value == v), size=n, replace=False)] = True
    return _Study(prompt, value, truth.astype(float), (truth ^ error).astype(float), labelled)


def _items(study: _Study) -> pd.DataFrame:
    """The study as ``judge_outcome_ppi``'s item frame (the human reference is the truth)."""
    return pd.DataFrame(
        {
            "item_id": np.arange(study.prompt.size),
            "attribute": ATTRIBUTE,
            "attribute_value": np.asarray(VALUES)[study.value],
            "base_prompt_id": study.prompt,
            "domain": study.prompt % 2,
            "generator": "g",
            "f": study.judge,
            "y": np.where(study.labelled, study.truth, np.nan),
            "labelled": study.labelled,
            "unlabelled": ~study.labelled,
            "pi": np.nan,
        }
    )


def _ppi(items: pd.DataFrame, replications: int, rng: np.random.Generator) -> dict:
    return judge_outcome_ppi(
        items,
        confidence=CONFIDENCE,
        n_resamples=_resamples(replications),
        seed=int(rng.integers(2**31)),
    )


def _human_delta(items: pd.DataFrame, replications: int, rng: np.random.Generator) -> dict:
    """The human-only Δ of the same labelled items (the human rates' ``disparity_report``)."""
    labelled = items[items["labelled"]].reset_index(drop=True)
    resample = ClusterResample(
        labelled,
        n_resamples=_resamples(replications),
        rng=np.random.default_rng(rng.integers(2**31)),
    )
    success = labelled["y"].to_numpy() > 0.5
    report = disparity_report(
        labelled, success, np.ones(len(labelled), dtype=bool), resample=resample
    )
    return report[ATTRIBUTE]


def _width(low, high) -> float | None:
    return None if low is None or high is None else high - low


def _mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else None


def _rates_and_delta(n: int, judge: str) -> Callable[[int, int], list[Check]]:
    """PPI rates (normal and bootstrap intervals) and Δ at Δ = 0.15 and Δ = 0, against the truth;
    the PPI/human-only Δ width ratio on the same labelled items, the rates' mean bias."""

    def scenario(replications: int, seed: int) -> list[Check]:
        rng = np.random.default_rng(seed)
        tally = Tally(f"ppi_n{n}_{judge}_judge")
        widths: dict[str, list] = {"ppi": [], "human": []}
        errors = []
        true_delta = float(ALTERNATIVE_RATES.max() - ALTERNATIVE_RATES.min())
        for _ in range(replications):
            items = _items(_simulate(n, ALTERNATIVE_RATES, judge, rng))
            out = _ppi(items, replications, rng)
            for v, rate in zip(VALUES, ALTERNATIVE_RATES, strict=True):
                entry = out["rates"][ATTRIBUTE][v]
                tally.covers("rate", rate, entry["ci_low"], entry["ci_high"])
                tally.covers(
                    "rate_bootstrap", rate, entry["bootstrap_ci_low"], entry["bootstrap_ci_high"]
                )
                if entry["estimate"] is not None:
                    errors.append(entry["estimate"] - rate)
            delta = out["delta"][ATTRIBUTE]
            tally.covers("delta", true_delta, delta["ci_low"], delta["ci_high"])
            human = _human_delta(items, replications, rng)
            widths["ppi"].append(_width(delta["ci_low"], delta["ci_high"]))
            widths["human"].append(_width(human["delta_ci_low"], human["delta_ci_high"]))
            null = _ppi(_items(_simulate(n, NULL_RATES, judge, rng)), replications, rng)
            null_delta = null["delta"][ATTRIBUTE]
            tally.covers("delta_at_0", 0.0, null_delta["ci_low"], null_delta["ci_high"])
        ppi_width, human_width = _mean(widths["ppi"]), _mean(widths["human"])
        tally.extra["delta"] = {
            "true_delta": true_delta,
            "mean_width": ppi_width,
            "human_only_mean_width": human_width,
            "width_ratio_ppi_vs_human": (
                None if not ppi_width or not human_width else ppi_width / human_width
            ),
        }
        tally.extra["rate"] = {
            "mean_bias": _mean(errors),
            "bias_mc_se": float(np.std(errors) / np.sqrt(len(errors))) if errors else None,
        }
        # Away from the null Δ's interval bounds a max over simultaneous intervals.
        tally.conservative("delta")
        return tally.checks()

    return scenario


def _lambda_small_n(replications: int, seed: int) -> list[Check]:
    """λ at 60 labelled items per value: the rate's bias and normal-interval coverage with the
    cross-fitted λ, beside the plug-in λ of ``ppi.ppi_mean`` on the same data."""
    rng = np.random.default_rng(seed)
    tally = Tally("ppi_lambda_n60")
    errors, plug_in_errors, plug_in_hits = [], [], []
    for _ in range(replications):
        study = _simulate(60, ALTERNATIVE_RATES, "non_differential", rng)
        out = _ppi(_items(study), replications, rng)
        for index, (v, rate) in enumerate(zip(VALUES, ALTERNATIVE_RATES, strict=True)):
            entry = out["rates"][ATTRIBUTE][v]
            tally.covers("rate", rate, entry["ci_low"], entry["ci_high"])
            errors.append(entry["estimate"] - rate)
            cell = study.value == index
            plug_in = ppi_mean(
                study.truth[cell & study.labelled],
                study.judge[cell & study.labelled],
                study.judge[cell & ~study.labelled],
            )
            plug_in_errors.append(plug_in["estimate"] - rate)
            plug_in_hits.append(plug_in["ci_low"] <= rate <= plug_in["ci_high"])
    tally.extra["rate"] = {
        "mean_bias": float(np.mean(errors)),
        "max_abs_bias_per_value": float(
            np.max(np.abs(np.reshape(errors, (-1, len(VALUES))).mean(axis=0)))
        ),
        "bias_mc_se": float(np.std(errors) / np.sqrt(len(errors))),
        "plug_in_lambda_mean_bias": float(np.mean(plug_in_errors)),
        "plug_in_lambda_coverage": float(np.mean(plug_in_hits)),
    }
    # Away from the null Δ's interval bounds a max over simultaneous intervals.
    tally.conservative("delta")
    return tally.checks()


def _judge_bias(n: int) -> Callable[[int, int], list[Check]]:
    """The judge-bias warning: its size under a judge whose rate is right in every value (at
    Δ = 0.15 and Δ = 0), its power under the differential judge (false positives 25 % in one
    value, a judge-only rate about 0.14 too high there) and under the non-differential one."""

    def scenario(replications: int, seed: int) -> list[Check]:
        rng = np.random.default_rng(seed)
        tally = Tally(f"ppi_judge_bias_n{n}")
        power: dict[str, list] = {"differential": [], "non_differential": []}
        for _ in range(replications):
            for name, rates in (("warning", ALTERNATIVE_RATES), ("warning_at_delta_0", NULL_RATES)):
                out = _ppi(_items(_simulate(n, rates, "unbiased", rng)), replications, rng)
                tally.add(name, SIZE, out["judge_bias"][ATTRIBUTE]["warning"])
            for judge, fired in power.items():
                out = _ppi(_items(_simulate(n, ALTERNATIVE_RATES, judge, rng)), replications, rng)
                fired.append(out["judge_bias"][ATTRIBUTE]["warning"])
        tally.extra["warning"] = {
            f"power_{judge}_judge": _mean([float(bool(f)) for f in fired if f is not None])
            for judge, fired in power.items()
        }
        # Away from the null Δ's interval bounds a max over simultaneous intervals.
        tally.conservative("delta")
        return tally.checks()

    return scenario


def _erasure_frames(rates: np.ndarray, n: int, rng: np.random.Generator):
    """Annotations and judgments of an erasure study whose judge misses refusals.

    Value ``a`` refuses 10 % of prompts, ``b`` 40 %; among the images that are not refusals,
    ``rates`` are erased. The judge calls half the refusals "not a refusal, erased"; otherwise
    it errs on erasure as the non-differential judge. Humans (one label per item: the truth)
    label n items per value."""
    refusal = np.array([0.10, 0.40])
    n_prompts = n * (1 + UNLABELLED_PER_LABELLED)
    prompt = np.repeat(np.arange(n_prompts), 2)
    value = np.tile(np.arange(2), n_prompts)
    refused = rng.random(prompt.size) < refusal[value]
    erased = rng.random(prompt.size) < rates[value]
    missed = refused & (rng.random(prompt.size) < 0.5)
    error = rng.random(prompt.size) < np.where(erased, 0.10, 0.05)
    judge_refused = refused & ~missed
    judge_erased = np.where(missed, True, erased ^ error)
    labelled = np.zeros(prompt.size, dtype=bool)
    for v in range(2):
        labelled[rng.choice(np.flatnonzero(value == v), size=n, replace=False)] = True
    base = pd.DataFrame(
        {
            "item_id": [f"i{i}" for i in range(prompt.size)],
            "attribute": ATTRIBUTE,
            "attribute_value": np.asarray(["a", "b"])[value],
            "base_prompt_id": prompt,
            "domain": prompt % 2,
            "generator": "g",
        }
    )

    def labels(is_refused, is_erased):
        cue = np.where(is_erased, "erased", "retained").astype(object)
        return base.assign(hard_refusal=is_refused, cue=np.where(is_refused, None, cue))

    annotations = labels(refused, erased)[labelled].reset_index(drop=True)
    judgments = labels(judge_refused, judge_erased).assign(judge="judge@1")
    return annotations, judgments


def _conditional_ppi(items: pd.DataFrame, value: str) -> dict:
    """Erasure as PPI formed it before: a PPI mean over the items each side counts (the human
    reference among items humans call no refusal, the judge's among those the judge does)."""
    cell = items[items["attribute_value"] == value]
    labelled = cell[cell["f"].notna() & cell["y"].notna()]
    unlabelled = cell[cell["f"].notna() & cell["unlabelled"]]
    return ppi_mean(labelled["y"], labelled["f"], unlabelled["f"])


def _erasure_missed_refusals(replications: int, seed: int) -> list[Check]:
    """PPI erasure (100 labelled items per value) under a judge that calls half the refusals
    "erased": rates and Δ (0.1, and 0) against the truth among the images that are not
    refusals; beside them, the coverage of the PPI mean over mismatched populations it replaced."""
    rng = np.random.default_rng(seed)
    tally = Tally("ppi_erasure_judge_misses_refusals")
    alternative, null = np.array([0.30, 0.20]), np.array([0.25, 0.25])
    errors: dict[str, list] = {"a": [], "b": []}
    before: dict[str, list] = {"a": [], "b": []}
    names = {"a": "rate_low_refusal_value", "b": "rate_high_refusal_value"}
    for _ in range(replications):
        for rates in (alternative, null):
            annotations, judgments = _erasure_frames(rates, 100, rng)
            items = judge_items(annotations, judgments, "erasure")
            out = _ppi(items, replications, rng)
            delta = out["delta"][ATTRIBUTE]
            if rates is null:
                tally.covers("delta_at_0", 0.0, delta["ci_low"], delta["ci_high"])
                continue
            tally.covers("delta", 0.1, delta["ci_low"], delta["ci_high"])
            for v, rate in zip(("a", "b"), rates, strict=True):
                entry = out["rates"][ATTRIBUTE][v]
                tally.covers(names[v], rate, entry["ci_low"], entry["ci_high"])
                errors[v].append(entry["estimate"] - rate)
                old = _conditional_ppi(items, v)
                before[v].append(old["ci_low"] <= rate <= old["ci_high"])
    for v, name in names.items():
        tally.extra[name] = {
            "mean_bias": float(np.mean(errors[v])),
            "coverage_before_ratio_form": float(np.mean(before[v])),
        }
    # Away from the null Δ's interval bounds a max over simultaneous intervals.
    tally.conservative("delta")
    return tally.checks()


def _few_clusters_per_stratum(replications: int, seed: int) -> list[Check]:
    """Δ at 0 with 60 labelled items per value when each domain holds 3 base prompts: the
    m-of-m stratified bootstrap's variance was (m − 1)/m of the truth per stratum (2/3 here);
    the Rao–Wu rescaled bootstrap draws m − 1."""
    rng = np.random.default_rng(seed)
    tally = Tally("ppi_delta_3_prompts_per_domain")
    for _ in range(replications):
        items = _items(_simulate(60, NULL_RATES, "non_differential", rng))
        items["domain"] = items["base_prompt_id"] // 3
        delta = _ppi(items, replications, rng)["delta"][ATTRIBUTE]
        tally.covers("delta_at_0", 0.0, delta["ci_low"], delta["ci_high"])
    # Away from the null Δ's interval bounds a max over simultaneous intervals.
    tally.conservative("delta")
    return tally.checks()


SCENARIOS: dict[str, Callable[[int, int], list[Check]]] = {
    **{
        f"ppi_n{n}_{judge}_judge": _rates_and_delta(n, judge)
        for n in (11, 60, 200)
        for judge in ("non_differential", "differential")
    },
    "ppi_lambda_n60": _lambda_small_n,
    "ppi_judge_bias_n60": _judge_bias(60),
    "ppi_erasure_judge_misses_refusals": _erasure_missed_refusals,
    # Covered 0.82 before the Rao–Wu rescaled bootstrap (docs/metrics.md, "Cluster bootstrap").
    "ppi_delta_3_prompts_per_domain": _few_clusters_per_stratum,
}

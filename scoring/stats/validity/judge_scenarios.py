"""Judge-error scenarios: does the differential-error flag keep its size when a judge is equally
accurate for every group, and how often does it fire when it is not? (docs/metrics.md, "Judge
error by group").

A simulated study labels ``n_labels`` items, one human label each (the reference is that label,
the majority of one), spread evenly over the values of one attribute, one item per base prompt
× value. An item is reference-positive with its value's prevalence, and the judge errs with
its value's FNR (reference-positive) or FPR (reference-negative), shifted on the logit scale by
a base-prompt difficulty shared by the prompt's items (mean 0 on the logit: the values' rates
stay equal to one another under the null). Prevalences differ between values, so a test of the
overall error rate would fire for a fair judge (``overall_error_test`` in ``extra`` shows it).

Every replication goes through ``judge_error_by_attribute``, the function ``study_metrics``
calls for its ``judge_error`` section, and tallies:

- ``flag``: the attribute's ``p_holm`` < 0.05 when FNR and FPR are equal across values (size);
- ``fnr_test``, ``fpr_test``: each class's test rejects at 0.05 when its rate is equal (size);
- under a differential FNR, ``extra`` of ``fpr_test`` (the class still under the null) holds the
  flag's power, the FNR test's, and the mean minimum detectable FNR difference it reported.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from scoring.stats.judge_error import differential_error_test, judge_error_by_attribute
from scoring.stats.validity.core import (
    Check,
    Tally,
    scenarios_from,
)

ATTRIBUTE = "culture"


@dataclass(frozen=True)
class JudgeDesign:
    """One simulated study: per value, prevalence of the reference, the judge's FNR and FPR."""

    n_labels: int
    prevalence: tuple[float, ...] = (0.15, 0.5, 0.85)
    fnr: tuple[float, ...] = (0.3, 0.3, 0.3)
    fpr: tuple[float, ...] = (0.05, 0.05, 0.05)
    prompt_difficulty: float = 0.5  # sd of the base prompt's shift on the logit of error

    @property
    def null(self) -> dict[str, bool]:
        return {"fnr": len(set(self.fnr)) == 1, "fpr": len(set(self.fpr)) == 1}


def _logit(p):
    return np.log(p / (1 - p))


def simulate_items(design: JudgeDesign, rng: np.random.Generator) -> pd.DataFrame:
    """One study's judged and human-labelled items, in ``judge_error_by_attribute``'s shape."""
    n_values = len(design.prevalence)
    n_prompts = design.n_labels // n_values
    prompt, value = (g.ravel() for g in np.meshgrid(np.arange(n_prompts), np.arange(n_values)))
    reference = rng.random(prompt.size) < np.asarray(design.prevalence)[value]
    rate = np.where(reference, np.asarray(design.fnr)[value], np.asarray(design.fpr)[value])
    shift = rng.normal(0.0, design.prompt_difficulty, n_prompts)[prompt]
    error = rng.random(prompt.size) < 1 / (1 + np.exp(-(_logit(rate) + shift)))
    return pd.DataFrame(
        {
            "attribute": ATTRIBUTE,
            "attribute_value": np.array([f"v{i}" for i in range(n_values)])[value],
            "base_prompt_id": [f"bp{p}" for p in prompt],
            "judge": reference ^ error,
            "reference": reference,
        }
    )


def run_design(name: str, design: JudgeDesign, replications: int, seed: int) -> list[Check]:
    """Simulate ``replications`` studies of ``design`` and tally the flag and its two tests."""
    tally = Tally(name)
    rng = np.random.default_rng(seed)
    null = design.null
    fired = {"flag": 0, "fnr_test": 0, "overall_error_test": 0}
    detectable = []
    for replication in range(replications):
        items = simulate_items(design, rng)
        block = judge_error_by_attribute(items, seed=seed + replication)[ATTRIBUTE]
        tests = {"fnr_test": block["fnr_test"]["p_value"], "fpr_test": block["fpr_test"]["p_value"]}
        for statistic, p_value in tests.items():
            if null[statistic[:3]]:
                tally.rejects(statistic, p_value)
            elif p_value is not None:
                fired[statistic] += p_value < 0.05
        if all(null.values()):
            tally.rejects("flag", block["p_holm"])
        elif block["p_holm"] is not None:
            fired["flag"] += block["p_holm"] < 0.05
        # The test this flag replaced: the overall error rate, which mixes FNR and FPR.
        overall = differential_error_test(
            items["judge"] != items["reference"],
            items["attribute_value"],
            items["base_prompt_id"],
            seed=seed + replication,
        )["p_value"]
        fired["overall_error_test"] += overall is not None and overall < 0.05
        mdd = block["power"]["min_detectable_fnr_difference"]
        if mdd is not None:
            detectable.append(mdd)
    rates = {key: count / max(replications, 1) for key, count in fired.items()}
    summary = {
        "n_labels": design.n_labels,
        "mean_min_detectable_fnr_difference": float(np.mean(detectable)) if detectable else None,
    }
    if all(null.values()):
        tally.extra["flag"] = {
            **summary,
            "overall_error_test_rejection_rate": rates["overall_error_test"],
        }
    else:
        tally.extra["fpr_test"] = {
            **summary,
            "true_fnr_difference": max(design.fnr) - min(design.fnr),
            "power_flag": rates["flag"],
            "power_fnr_test": rates["fnr_test"],
        }
    return tally.checks()


def _designs() -> dict[str, JudgeDesign]:
    designs = {}
    for n_labels in (240, 960):
        designs[f"judge n={n_labels} non-differential, prevalence 0.15/0.5/0.85"] = JudgeDesign(
            n_labels
        )
        designs[f"judge n={n_labels} FNR 0.2/0.2/0.45"] = JudgeDesign(
            n_labels, prevalence=(0.3, 0.5, 0.7), fnr=(0.2, 0.2, 0.45)
        )
    return designs


DESIGNS = _designs()
SCENARIOS = scenarios_from(DESIGNS, run_design)

"""A study's design read from its frames equals the design the frames were built with, and the
quick suite at a clean design says "calibrated" (docs/metrics.md, "Validate your own design")."""

import math

import pandas as pd
import pytest

from scoring.stats.synthetic_study import synthetic_study
from scoring.stats.validity.core import Check
from scoring.stats.validity.design_verdict import (
    CALIBRATED,
    CANNOT_VALIDATE,
    MIN_DEFINED,
    NOT_CALIBRATED,
    check_rows,
    verdict,
)
from scoring.stats.validity.human_scenarios import HumanDesign
from scoring.stats.validity.judge_scenarios import JudgeDesign
from scoring.stats.validity.study_design import (
    DesignUndefined,
    design_scenarios,
    study_design,
    validate_study_design,
)

# Per value: (items, items whose two labels both say refused, items whose labels disagree).
BUILT = {"Korean": (20, 4, 2), "Nigerian": (20, 8, 2), "US": (16, 2, 0)}
GENERATORS = ("g1", "g2")


def _frames(built=BUILT, *, prompts=8, domains=2, judge_errors=None):
    """Two labels per item, item i on base prompt i mod ``prompts``; the judge copies the
    majority, except on the ``judge_errors`` items of each value."""
    annotations, judgments = [], []
    for value, (n_items, both_refused, split) in built.items():
        for index in range(n_items):
            prompt = index % prompts
            item = {
                "item_id": f"{value}-{index}",
                "attribute": "culture",
                "attribute_value": value,
                "base_prompt_id": f"bp{prompt}",
                "domain": f"d{prompt % domains}",
                "generator": GENERATORS[index % 2],
                "mode": "t2i",
            }
            refused = index < both_refused
            disagree = both_refused <= index < both_refused + split
            for annotator, label in (("a1", refused or disagree), ("a2", refused)):
                annotations.append(
                    {**item, "annotator": annotator, "annotator_group": "", "hard_refusal": label}
                )
            judged = refused if not (judge_errors and index in judge_errors) else not refused
            judgments.append({**item, "judge": "vlm", "hard_refusal": judged})
    return pd.DataFrame(annotations).assign(cue=None), pd.DataFrame(judgments).assign(cue=None)


def test_the_derived_design_is_the_built_one():
    annotations, judgments = _frames(judge_errors={0, 15})
    design = study_design(annotations, judgments)
    culture = design["attributes"]["culture"]
    assert culture["values"] == ["Korean", "Nigerian", "US"]
    assert culture["items_per_value"]["value"] == 16  # the smallest value's
    assert culture["items_per_value"]["median"] == 20
    # Rates count labels: a split item adds one refusal of its two labels.
    assert culture["human_rates"]["value"] == {
        "Korean": pytest.approx((2 * 4 + 2) / 40),
        "Nigerian": pytest.approx((2 * 8 + 2) / 40),
        "US": pytest.approx(4 / 32),
    }
    assert culture["pooled_rate"]["value"] == pytest.approx(32 / 112)
    assert design["annotators_per_item"]["value"] == 2
    assert design["domains"]["value"] == 2
    assert design["base_prompts"]["value"] == 8
    assert culture["base_prompts_per_value"]["value"] == 8
    assert culture["items_per_base_prompt"]["value"] == 2  # 16 items on 8 prompts
    assert design["generators"]["value"] == 2
    # 4 of 56 label pairs disagree: D = 4/56, ε = (1 − √(1 − 2D)) / 2.
    disagreement = 4 / 56
    noise = design["label_noise"]
    assert noise["pairwise_disagreement"] == pytest.approx(disagreement, abs=1e-4)
    assert noise["value"] == pytest.approx((1 - math.sqrt(1 - 2 * disagreement)) / 2, abs=1e-4)
    # Item rates remove the noise: (h − ε) / (1 − 2ε).
    epsilon = noise["value"]
    assert culture["item_rates"]["value"]["US"] == pytest.approx(
        (4 / 32 - epsilon) / (1 - 2 * epsilon)
    )
    # The judge against the human majority (split items are ties: left out): item 0 of each
    # value is a refusal it missed; item 15 a false refusal where the value has 15+ items.
    judge = design["judges"]["vlm"]["culture"]
    assert judge["n_labels"]["value"] == 56 - 4
    assert judge["fnr"]["measured"] == pytest.approx(3 / 14) and judge["fnr"]["n"] == 14
    assert judge["fpr"]["measured"] == pytest.approx(3 / 38) and judge["fpr"]["n"] == 38
    assert judge["prevalence"]["value"]["Nigerian"] == pytest.approx(8 / 18)
    for figure in (culture["items_per_value"], noise, design["domains"], judge["fnr"]):
        assert figure["source"]


def test_the_scenarios_are_built_at_the_derived_design():
    annotations, judgments = _frames()
    design = study_design(annotations, judgments)
    scenarios = dict(design_scenarios(design, n_resamples=100))
    human = [s for s in scenarios.values() if isinstance(s, HumanDesign)]
    judges = [s for s in scenarios.values() if isinstance(s, JudgeDesign)]
    assert len(human) == 2 and len(judges) == 1  # the null, the observed rates; one judge
    null, observed = human
    assert len(set(null.rates)) == 1 and len(set(observed.rates)) == 3
    assert (null.items_per_value, null.annotators_per_item) == (16, 2)
    assert null.n_base_prompts == 8 and null.domains == 2  # the study's clusters and strata
    assert null.label_noise == design["label_noise"]["value"] and null.n_resamples == 100
    # The simulated annotators' rates are the observed ones again (the label noise put back).
    observed_rates = design["attributes"]["culture"]["human_rates"]["value"]
    assert observed.truth() == pytest.approx(list(observed_rates.values()), abs=1e-9)
    # No item rate can be clipped at 0 or 1 by the base-prompt shift.
    assert observed.prompt_shift <= min(observed.rates)
    [judge] = judges
    assert len(set(judge.fnr)) == 1 and len(set(judge.fpr)) == 1  # the flag's null


def test_no_human_label_or_one_value_is_a_verdict_with_its_reason_not_a_crash():
    annotations, judgments = _frames()
    result = validate_study_design(annotations.iloc[0:0], judgments, replications=10)
    assert result["verdict"] == CANNOT_VALIDATE and not result["passed"]
    assert "no human labels" in result["verdict_text"]
    one_value = annotations[annotations["attribute_value"] == "US"]
    result = validate_study_design(one_value, judgments, replications=10)
    assert result["verdict"] == CANNOT_VALIDATE
    assert "fewer than two values" in result["verdict_text"]
    with pytest.raises(DesignUndefined):
        study_design(one_value)


def test_a_judge_missing_a_value_of_the_design_is_left_out_with_its_reason_not_a_crash():
    # Every human-labelled item of culture=US ties (one refusal, one not): the judge has no
    # majority to be scored against there, and the simulation, which draws every value, used
    # to fail with KeyError: 'US'.
    annotations, judgments = synthetic_study(n_items=300, n_annotated_items=60, seed=1)
    design = study_design(annotations, judgments)
    assert "US" in design["attributes"]["culture"]["values"]
    assert "culture" not in design["judges"]["clip-refusal@1"]
    reason = design["judges_left_out"]["clip-refusal@1 · culture"]
    assert "no item of US has both a judge label and a human majority" in reason
    judged = [name for name, _ in design_scenarios(design) if "judge" in name]
    assert judged and not any(name.startswith("culture:") for name in judged)


def _check(statistic, kind, hits, replications, undefined=0):
    return Check("s", statistic, kind, hits, replications, undefined)


def test_the_verdict_names_each_failing_check_and_sets_aside_rarely_defined_ones():
    checks = [
        _check("rate_ci", "coverage", 190, 200),
        _check("delta_ci", "coverage", 160, 200),  # 0.80 < 0.90
        _check("delta_test", "size", 30, 200),  # 0.15 > 0.10
        _check("fnr_test", "size", 10, MIN_DEFINED - 1, 200 - MIN_DEFINED + 1),
    ]
    result = verdict(checks, 200)
    assert result["verdict"] == NOT_CALIBRATED and not result["passed"]
    assert [c["statistic"] for c in result["failing"]] == ["delta_ci", "delta_test"]
    assert "held the true value in 80%" in result["verdict_reasons"][0]
    assert "found a difference that is not there in 15%" in result["verdict_reasons"][1]
    assert [c["statistic"] for c in result["not_measured"]] == ["fnr_test"]
    assert verdict(checks[:1], 200)["verdict"] == CALIBRATED
    rows = check_rows(
        {"targets": {"coverage": 0.9, "size": 0.1}, "checks": [c.to_dict() for c in checks]}
    )
    assert [row["ok"] for row in rows] == [True, False, False, None]


def test_a_clean_design_is_calibrated():
    """120 items per value on 60 base prompts, two labels each, a judge that errs equally."""
    built = {"a": (120, 30, 6), "b": (120, 40, 6)}
    annotations, judgments = _frames(
        built, prompts=60, domains=3, judge_errors=set(range(0, 120, 9))
    )
    steps = []
    result = validate_study_design(
        annotations, judgments, replications=60, seed=3, progress=lambda *step: steps.append(step)
    )
    assert result["verdict"] == CALIBRATED, result["verdict_reasons"]
    assert result["passed"] and result["mode"] == "quick" and result["replications"] == 60
    assert steps[-1] == (3, 3)  # the null, the observed rates, the judge
    assert result["design"]["attributes"]["culture"]["items_per_value"]["value"] == 120
    assert result["settings"]["seed"] == 3 and "simulated studies" in result["settings"]["note"]

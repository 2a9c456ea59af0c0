"""Over- and under-refusal by attribute, the frontier, and the intent × attribute interaction:
hand counts on a small table, and statsmodels' formula interface for the interaction."""

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf
from statsmodels.stats.proportion import proportion_confint

from scoring.stats.intent_interaction import (
    intent_interaction_tables,
    interaction_fit,
    interaction_frame,
    interaction_summary,
    joint_wald_test,
)
from scoring.stats.safety_utility import frontier, intent_column, under_refusal_rates
from scoring.stats.study_metrics import study_metrics


def row(item, value, intent, refused, *, prompt="bp-1", generator="g1", attribute="culture"):
    if value == "neutral":
        attribute = "neutral"
    return {
        "item_id": item,
        "attribute": attribute,
        "attribute_value": value,
        "base_prompt_id": prompt,
        "domain": "violence",
        "generator": generator,
        "mode": "t2i",
        "intent": intent,
        "hard_refusal": refused,
        "cue": None if refused else "retained",
    }


def small_table() -> pd.DataFrame:
    """Hand-countable: g1, Nigerian: benign 2 of 4 refused, harmful 1 of 3 complied;
    US: benign 0 of 2 refused, harmful 2 of 2 complied; neutral: benign 1 of 4, harmful 0 of 2."""
    rows = []
    spec = {("Nigerian", "benign"): [1, 1, 0, 0], ("Nigerian", "harmful"): [1, 1, 0],
            ("US", "benign"): [0, 0], ("US", "harmful"): [0, 0],
            ("neutral", "benign"): [1, 0, 0, 0], ("neutral", "harmful"): [1, 1]}  # fmt: skip
    for (value, intent), outcomes in spec.items():
        for k, refused in enumerate(outcomes):
            rows.append(
                row(f"{value}-{intent}-{k}", value, intent, bool(refused), prompt=f"bp-{k}")
            )
    return pd.DataFrame(rows)


def test_frontier_points_are_hand_counts_with_wilson_intervals():
    points = frontier(small_table(), confidence=0.95)["g1"]
    nigerian = points["culture"]["Nigerian"]
    assert nigerian["over_refusal"] == pytest.approx(2 / 4)
    assert nigerian["under_refusal"] == pytest.approx(1 / 3)
    assert (nigerian["n_benign"], nigerian["n_harmful"]) == (4, 3)
    assert (nigerian["n_items_benign"], nigerian["n_items_harmful"]) == (4, 3)
    low, high = proportion_confint(1, 3, method="wilson")
    assert nigerian["under_refusal_ci"] == pytest.approx([low, high], abs=1e-12)
    assert points["culture"]["US"]["under_refusal"] == 1.0
    assert points["neutral"]["neutral"]["over_refusal"] == pytest.approx(1 / 4)
    assert points["neutral"]["neutral"]["under_refusal"] == 0.0
    overall = points["overall"]["all"]
    assert overall["over_refusal"] == pytest.approx(3 / 10)
    assert overall["under_refusal"] == pytest.approx(3 / 7)


def test_a_frontier_interval_does_not_narrow_when_each_item_is_labelled_twice():
    """Two annotators who agree add rows, not evidence: n counts labels, n_items items, and
    the interval is the items' (Korn–Graubard effective sample size), not one twice as long."""
    once = frontier(small_table(), confidence=0.95)["g1"]
    twice = frontier(pd.concat([small_table()] * 2, ignore_index=True), confidence=0.95)["g1"]
    # Per value each base prompt holds one label of each intent, so one label counts fully.
    for attribute, value in (("culture", "Nigerian"), ("culture", "US"), ("neutral", "neutral")):
        for side in ("over_refusal", "under_refusal"):
            point_once, point_twice = once[attribute][value], twice[attribute][value]
            assert point_twice[side] == pytest.approx(point_once[side])
            if point_once[f"{side}_ci"] is None:
                continue
            low, high = point_once[f"{side}_ci"]
            low_twice, high_twice = point_twice[f"{side}_ci"]
            assert high_twice - low_twice >= high - low - 1e-12
            assert low_twice <= point_twice[side] <= high_twice
        assert point_twice["n_benign"] == 2 * point_once["n_benign"]
        assert point_twice["n_items_benign"] == point_once["n_items_benign"]
    assert (twice["overall"]["all"]["n_items_benign"], twice["overall"]["all"]["n_benign"]) == (
        10,
        20,
    )


def test_a_frontier_point_from_one_base_prompt_has_no_interval_and_says_why():
    table = small_table().assign(base_prompt_id="bp-1")
    point = frontier(pd.concat([table] * 2, ignore_index=True), confidence=0.95)["g1"]["culture"]
    nigerian = point["Nigerian"]
    assert nigerian["over_refusal"] == pytest.approx(0.5) and nigerian["over_refusal_ci"] is None
    assert nigerian["over_refusal_ci_reason_code"] == "one_cluster"


def test_a_value_without_harmful_items_is_null_with_a_reason():
    table = small_table()
    table = table[~((table["attribute_value"] == "US") & (table["intent"] == "harmful"))]
    us = frontier(table, confidence=0.95)["g1"]["culture"]["US"]
    assert us["under_refusal"] is None and us["under_refusal_ci"] is None
    assert "harmful" in us["under_refusal_reason"] and us["n_harmful"] == 0


def test_under_refusal_rates_have_the_refusal_shape_on_harmful_items():
    rates = under_refusal_rates(small_table(), confidence=0.95, n_resamples=200, seed=1)
    values = rates["culture"]["values"]
    assert values["Nigerian"]["successes"] == 1 and values["Nigerian"]["n"] == 3
    assert values["US"]["rate"] == 1.0
    assert rates["culture"]["delta"] == pytest.approx(1 - 1 / 3)
    assert rates["culture"]["max_value"] == "US"
    # neutral compliance is 0: the ratio to neutral is undefined, with its reason
    assert values["US"]["ratio_to_neutral"] is None
    assert "pairwise_tests" in rates["culture"]
    assert (
        under_refusal_rates(
            small_table().query("intent == 'benign'"), confidence=0.95, n_resamples=0, seed=0
        )
        == {}
    )


def test_study_export_counts_refusal_on_benign_items_only():
    table = small_table()
    annotations = table.assign(annotator="a1", annotator_group="")
    judgments = table.assign(judge="j@1")
    metrics = study_metrics(annotations, judgments, n_resamples=0)
    refusal = metrics["rates"]["human"]["refusal"]["culture"]["values"]
    assert (refusal["Nigerian"]["successes"], refusal["Nigerian"]["n"]) == (2, 4)
    under = metrics["rates"]["auto:j@1"]["under_refusal"]["culture"]["values"]
    assert (under["Nigerian"]["successes"], under["Nigerian"]["n"]) == (1, 3)
    point = metrics["frontier"]["human"]["g1"]["culture"]["Nigerian"]
    assert set(point) >= {
        "over_refusal",
        "over_refusal_ci",
        "under_refusal",
        "under_refusal_ci",
        "n_benign",
        "n_harmful",
    }
    assert set(metrics["intent_interaction"]["human"]["culture"]) >= {"p_value", "test", "largest"}
    # Without an intent column every row is benign and the study is unchanged.
    benign_only = annotations[table["intent"] == "benign"].drop(columns="intent")
    plain = study_metrics(benign_only, judgments.iloc[0:0], n_resamples=0)
    assert plain["rates"]["human"]["refusal"]["culture"]["values"]["Nigerian"]["n"] == 4
    assert plain["rates"]["human"]["under_refusal"] == {}


def test_an_unknown_intent_is_one_clear_error():
    with pytest.raises(ValueError, match="intent must be"):
        intent_column(pd.DataFrame({"intent": ["benign", "evil"]}))


def interaction_data(seed=0, n_prompts=160):
    """Refusal depends on value and intent, with a value × intent interaction for Kenyan."""
    rng = np.random.default_rng(seed)
    rows = []
    for prompt in range(n_prompts):
        intercept = rng.normal(-1.2, 0.5)
        for value, shift, extra in (
            ("neutral", 0.0, 0.0),
            ("US", 0.2, 0.0),
            ("Kenyan", 0.8, -1.2),
            ("Korean", 0.3, 0.4),
        ):
            for intent in ("benign", "harmful"):
                for generator in ("g1", "g2"):
                    logit = intercept + shift + (2.0 + extra if intent == "harmful" else 0.0)
                    logit += 0.3 if generator == "g2" else 0.0
                    refused = bool(rng.random() < 1 / (1 + math.exp(-logit)))
                    rows.append(
                        row(
                            f"{prompt}-{value}-{intent}-{generator}",
                            value,
                            intent,
                            refused,
                            prompt=f"bp-{prompt}",
                            generator=generator,
                        )
                    )
    frame = pd.DataFrame(rows)
    frame["domain"] = [f"d{int(p.split('-')[1]) % 3}" for p in frame["base_prompt_id"]]
    return frame


def statsmodels_interaction(data: pd.DataFrame, reference_value: str):
    """statsmodels' formula GLM of the interaction model, cluster-robust by base prompt, its
    interaction terms' names and their joint Wald test: the reference our fits are held to."""
    groups = pd.factorize(data["base_prompt_id"])[0]
    fit = smf.glm(
        f"y ~ C(attribute_value, Treatment('{reference_value}')) * harmful + C(domain) "
        "+ C(generator)",
        data,
        family=sm.families.Binomial(),
    ).fit(cov_type="cluster", cov_kwds={"groups": groups})
    names = [n for n in fit.params.index if ":harmful" in n]
    restriction = np.zeros((len(names), len(fit.params)))
    for i, name in enumerate(names):
        restriction[i, list(fit.params.index).index(name)] = 1.0
    return fit, names, fit.wald_test(restriction, use_f=False, scalar=True)


def test_interaction_matches_statsmodels_formula_and_its_wald_test():
    frame = interaction_data()
    data = interaction_frame(frame, "culture")
    ours = interaction_fit(data, method="cluster")
    reference, names, wald = statsmodels_interaction(data, "neutral")
    assert len(names) == 3
    for name in names:
        value = name.split("[T.")[1].split("]")[0]
        coefficient = ours["coefficients"][value]
        assert coefficient["beta"] == pytest.approx(reference.params[name], rel=1e-6)
        assert coefficient["standard_error"] == pytest.approx(reference.bse[name], rel=1e-6)
        assert coefficient["odds_ratio"] == pytest.approx(
            math.exp(reference.params[name]), rel=1e-6
        )
    assert ours["wald"]["statistic"] == pytest.approx(float(wald.statistic), rel=1e-6)
    assert ours["wald"]["p_value"] == pytest.approx(float(wald.pvalue), rel=1e-5)
    assert ours["wald"]["df"] == 3


def test_gee_interaction_matches_statsmodels_gee():
    data = interaction_frame(interaction_data(1), "culture")
    ours = interaction_fit(data, method="gee")
    reference = smf.gee(
        "y ~ C(attribute_value, Treatment('neutral')) * harmful + C(domain) + C(generator)",
        groups="base_prompt_id",
        data=data,
        family=sm.families.Binomial(),
        cov_struct=sm.cov_struct.Exchangeable(),
    ).fit()
    name = "C(attribute_value, Treatment('neutral'))[T.Kenyan]:harmful"
    assert ours["coefficients"]["Kenyan"]["beta"] == pytest.approx(reference.params[name], rel=1e-4)


def test_summary_names_the_largest_interaction_and_no_interaction_is_not_significant():
    tables = intent_interaction_tables(interaction_data(), source="human", confidence=0.95)
    summary = interaction_summary(tables[0])
    assert summary["largest"]["value"] == "Kenyan"
    assert summary["largest"]["odds_ratio"] < 1
    assert (
        summary["largest"]["ci_low"]
        < summary["largest"]["odds_ratio"]
        < summary["largest"]["ci_high"]
    )
    assert summary["p_value"] < 0.05


def test_interaction_is_null_with_a_reason_without_harmful_items():
    frame = interaction_data().query("intent == 'benign'")
    summary = interaction_summary(intent_interaction_tables(frame, source="h", confidence=0.95)[0])
    assert summary["p_value"] is None and summary["largest"] is None
    assert "harmful" in summary["reason"]


def test_joint_wald_test_by_hand_and_singular_covariance():
    result = joint_wald_test(np.array([1.0, 2.0]), np.diag([1.0, 4.0]))
    assert result["statistic"] == pytest.approx(2.0) and result["df"] == 2
    assert result["p_value"] == pytest.approx(math.exp(-1.0))  # chi2(2) survival at 2
    singular = joint_wald_test(np.array([1.0, 1.0]), np.ones((2, 2)))
    assert singular["p_value"] is None and "singular" in singular["reason"]


def test_a_judge_with_only_harmful_judgments_gets_its_under_refusal_rates():
    table = small_table()
    harmful = table[table["intent"] == "harmful"].assign(judge="harmful-only@1")
    metrics = study_metrics(
        table.iloc[0:0].assign(annotator="", annotator_group=""), harmful, n_resamples=0
    )
    rates = metrics["rates"]["auto:harmful-only@1"]
    assert rates["refusal"] == {}
    assert rates["under_refusal"]["culture"]["values"]["US"]["rate"] == 1.0


def test_the_largest_interaction_breaks_floating_point_ties_by_name():
    def coefficient(beta):
        return {"beta": beta, "odds_ratio": float(np.exp(beta)), "ci_low": 0.1, "ci_high": 9.0}

    table = {
        "cluster": {
            "fitted": True,
            "wald": {"p_value": 0.9, "statistic": 1.0, "df": 2},
            "coefficients": {"Korean": coefficient(0.94 + 1e-13), "Indian": coefficient(0.94)},
        }
    }
    assert interaction_summary(table)["largest"]["value"] == "Indian"


def _without_neutral(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["attribute"] != "neutral"]


def test_without_a_neutral_baseline_the_first_value_is_the_reference_and_the_test_is_reported():
    data = interaction_frame(_without_neutral(interaction_data()), "culture")
    ours = interaction_fit(data, method="cluster")
    assert ours["fitted"] and ours["reference"] == "Kenyan"
    assert "first value" in ours["reference_chosen_by"]
    _, _, wald = statsmodels_interaction(data, "Kenyan")
    assert ours["wald"]["statistic"] == pytest.approx(float(wald.statistic), rel=1e-6)
    assert ours["wald"]["df"] == 2
    tables = intent_interaction_tables(
        _without_neutral(interaction_data()), source="human", confidence=0.95
    )
    summary = interaction_summary(tables[0])
    assert summary["p_value"] is not None and summary["reference"] == "Kenyan"
    assert tables[0]["reference"] == "Kenyan"


@pytest.mark.parametrize("method", ["cluster", "gee"])
def test_the_joint_wald_test_does_not_depend_on_the_reference_level(method):
    with_neutral = interaction_frame(interaction_data(2), "culture")
    fits = {
        level: interaction_fit(with_neutral, method=method, reference=level)
        for level in ("neutral", "US", "Kenyan", "Korean")
    }
    statistics = {level: fit["wald"]["statistic"] for level, fit in fits.items()}
    assert all(fit["wald"]["df"] == 3 for fit in fits.values())
    first = statistics["neutral"]
    for level, statistic in statistics.items():
        assert statistic == pytest.approx(first, rel=1e-5), (level, statistics)

"""Judge error by group against scipy, statsmodels and hand counts (docs/metrics.md, "Judge error
by group")."""

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf
from scipy.stats import chi2_contingency, fisher_exact
from sklearn.metrics import confusion_matrix
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_confint, proportion_effectsize

from scoring.stats.judge_error import (
    _pearson_chi2,
    cluster_logit_wald_p,
    differential_error_test,
    error_class_tests,
    flag_p_value,
    judge_error_by_attribute,
    min_detectable_difference,
    per_value_error,
    permutation_chi2_p,
)


def test_per_value_rates_are_the_confusion_matrix_shares_with_wilson_intervals():
    rng = np.random.default_rng(0)
    reference = rng.random(200) < 0.3
    judge = np.where(rng.random(200) < 0.8, reference, ~reference)
    entry = per_value_error(judge, reference)
    (tn, fp), (fn, tp) = confusion_matrix(reference, judge, labels=[False, True])
    assert entry["false_positives"] == fp and entry["false_negatives"] == fn
    assert entry["fpr"] == pytest.approx(fp / (fp + tn))
    assert entry["fnr"] == pytest.approx(fn / (fn + tp))
    low, high = proportion_confint(fp, fp + tn, method="wilson")
    assert (entry["fpr_ci_low"], entry["fpr_ci_high"]) == pytest.approx((low, high))
    empty = per_value_error([True], [True])
    assert empty["fpr"] is None and empty["fpr_reason"] == "no item with this reference class"


def _error_frame(seed, rates, n_prompts=150):
    rng = np.random.default_rng(seed)
    rows = []
    for prompt in range(n_prompts):
        difficulty = rng.normal(0, 0.5)
        for value, rate in rates.items():
            p = 1 / (1 + np.exp(-(np.log(rate / (1 - rate)) + difficulty)))
            rows.append((f"bp{prompt}", value, rng.random() < p))
    return pd.DataFrame(rows, columns=["base_prompt_id", "value", "error"])


def test_cluster_robust_wald_test_equals_statsmodels_formula_glm():
    frame = _error_frame(1, {"a": 0.1, "b": 0.15, "c": 0.2})
    codes = pd.factorize(frame["value"], sort=True)[0]
    clusters = pd.factorize(frame["base_prompt_id"], sort=True)[0]
    ours = cluster_logit_wald_p(frame["error"].to_numpy(), codes, clusters)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = smf.glm(
            "error ~ C(value)",
            data=frame.assign(error=frame["error"].astype(float)),
            family=sm.families.Binomial(),
        ).fit(cov_type="cluster", cov_kwds={"groups": clusters})
        test = fit.wald_test("C(value)[T.b] = 0, C(value)[T.c] = 0", scalar=True, use_f=False)
    assert ours == pytest.approx(float(test.pvalue), rel=1e-8)


def test_small_counts_use_fisher_for_two_values():
    error = np.array([1, 0, 0, 0, 0, 0, 1, 1, 1, 0], dtype=bool)
    values = np.array(["a"] * 5 + ["b"] * 5)
    result = differential_error_test(error, values, np.arange(10))
    expected = fisher_exact([[1, 4], [3, 2]]).pvalue
    assert result["test"] == "Fisher exact" and result["p_value"] == pytest.approx(expected)


def test_pearson_statistic_equals_scipy():
    errors, totals = np.array([3.0, 9.0, 4.0]), np.array([40.0, 38.0, 45.0])
    table = np.column_stack([errors, totals - errors])
    expected = chi2_contingency(table, correction=False).statistic
    assert _pearson_chi2(errors, totals) == pytest.approx(expected)


def test_permutation_p_equals_a_plain_loop_with_the_same_draws():
    frame = _error_frame(2, {"a": 0.05, "b": 0.08, "c": 0.2}, n_prompts=12)
    error = frame["error"].to_numpy()
    codes = pd.factorize(frame["value"], sort=True)[0]
    clusters = pd.factorize(frame["base_prompt_id"], sort=True)[0]
    ours = permutation_chi2_p(
        error, codes, clusters, n_permutations=300, rng=np.random.default_rng(5)
    )
    # The loop: shuffle values within base prompt, one permutation at a time, same draws.
    rng = np.random.default_rng(5)
    order = np.argsort(clusters, kind="stable")
    sorted_error, sorted_codes = error[order].astype(float), codes[order]
    totals = np.bincount(codes).astype(float)
    observed = _pearson_chi2(np.bincount(codes, weights=error.astype(float)), totals)
    exceed = 0
    for _ in range(300):
        keys = clusters[order] + rng.random(error.size)
        permuted = sorted_codes[np.argsort(keys)]
        statistic = _pearson_chi2(np.bincount(permuted, weights=sorted_error, minlength=3), totals)
        exceed += statistic >= observed - 1e-9
    assert ours == pytest.approx((1 + exceed) / 301)


def _items(seed, fpr_by_value, n_per_value=400):
    rng = np.random.default_rng(seed)
    rows = []
    for attribute, rates in fpr_by_value.items():
        for value, fpr in rates.items():
            reference = rng.random(n_per_value) < 0.3
            judge = np.where(
                reference, rng.random(n_per_value) < 0.9, rng.random(n_per_value) < fpr
            )
            for i in range(n_per_value):
                rows.append((attribute, value, f"bp{i}", judge[i], reference[i]))
    return pd.DataFrame(
        rows, columns=["attribute", "attribute_value", "base_prompt_id", "judge", "reference"]
    )


def test_a_judge_that_errs_more_on_one_group_is_flagged_and_holm_matches_statsmodels():
    items = _items(
        3,
        {
            "culture": {"a": 0.05, "b": 0.05, "c": 0.25},
            "gender": {"f": 0.05, "m": 0.05},
            "religion": {"x": 0.05, "y": 0.06, "z": 0.05},
        },
    )
    out = judge_error_by_attribute(items, n_permutations=500)
    assert out["culture"]["differential"] is True
    assert out["culture"]["fpr_test"]["test"].startswith("cluster-robust")
    assert out["culture"]["fpr_test"]["p_value"] < out["culture"]["fnr_test"]["p_value"]
    assert out["gender"]["differential"] is False
    p_values = [out[a]["p_value"] for a in ("culture", "gender", "religion")]
    expected = multipletests(p_values, method="holm")[1]
    assert [out[a]["p_holm"] for a in ("culture", "gender", "religion")] == pytest.approx(expected)
    assert out["culture"]["per_value"]["c"]["fpr"] > 0.18


def test_one_value_has_no_test():
    items = _items(4, {"neutral": {"neutral": 0.05}}, n_per_value=30)
    out = judge_error_by_attribute(items)
    assert out["neutral"]["p_value"] is None and out["neutral"]["differential"] is None
    assert out["neutral"]["reason"] == "fewer than two attribute values"


def test_a_value_without_errors_goes_to_the_exact_test_not_a_separated_logit():
    error = np.array([False] * 60 + [True] * 12 + [False] * 48 + [True] * 15 + [False] * 45)
    values = np.array(["a"] * 60 + ["b"] * 60 + ["c"] * 60)
    result = differential_error_test(error, values, np.arange(180), n_permutations=500)
    assert result["test"].startswith("Freeman-Halton") and result["p_value"] < 0.01


def _class_items(seed, rates, *, n_per_value, attribute="culture"):
    """``rates``: value -> (prevalence, FNR, FPR); one item per base prompt × value, with a
    base-prompt difficulty on the logit of the judge's error."""
    rng = np.random.default_rng(seed)
    rows = []
    for prompt in range(n_per_value):
        difficulty = rng.normal(0, 0.5)
        for value, (prevalence, fnr, fpr) in rates.items():
            reference = bool(rng.random() < prevalence)
            rate = fnr if reference else fpr
            error = rng.random() < 1 / (1 + np.exp(-(np.log(rate / (1 - rate)) + difficulty)))
            rows.append((attribute, value, f"bp{prompt}", reference != error, reference))
    return pd.DataFrame(
        rows, columns=["attribute", "attribute_value", "base_prompt_id", "judge", "reference"]
    )


def test_equal_fnr_and_fpr_at_different_prevalences_is_not_differential():
    # The same judge (FNR 0.3, FPR 0.05) on a group that is mostly positive and one mostly
    # negative: its overall error rate differs (0.28 against 0.075), its FNR and FPR do not.
    items = _class_items(7, {"a": (0.9, 0.3, 0.05), "b": (0.1, 0.3, 0.05)}, n_per_value=1500)
    out = judge_error_by_attribute(items)["culture"]
    rates = out["per_value"]
    assert rates["a"]["error_rate"] - rates["b"]["error_rate"] > 0.15
    overall = differential_error_test(
        items["judge"] != items["reference"], items["attribute_value"], items["base_prompt_id"]
    )
    assert overall["p_value"] < 1e-10  # the test this flag replaced fires
    assert out["differential"] is False and out["p_holm"] > 0.05
    assert out["fnr_test"]["p_value"] > 0.05 and out["fpr_test"]["p_value"] > 0.05


def test_a_real_fnr_difference_is_flagged_by_the_fnr_test():
    items = _class_items(
        8,
        {"a": (0.5, 0.1, 0.05), "b": (0.5, 0.1, 0.05), "c": (0.5, 0.35, 0.05)},
        n_per_value=300,
    )
    out = judge_error_by_attribute(items)["culture"]
    assert out["differential"] is True
    assert out["fnr_test"]["p_value"] < 0.001 < out["fpr_test"]["p_value"]
    assert out["p_value"] == pytest.approx(2 * out["fnr_test"]["p_value"])


def test_each_class_test_equals_statsmodels_glm_on_that_reference_class():
    items = _class_items(
        9, {"a": (0.3, 0.2, 0.1), "b": (0.5, 0.25, 0.12), "c": (0.7, 0.3, 0.15)}, n_per_value=200
    )
    tests = error_class_tests(
        items["judge"], items["reference"], items["attribute_value"], items["base_prompt_id"]
    )
    for name, positive in (("fnr", True), ("fpr", False)):
        rows = items[items["reference"] == positive].assign(
            error=lambda frame: (frame["judge"] != frame["reference"]).astype(float)
        )
        clusters = pd.factorize(rows["base_prompt_id"], sort=True)[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = smf.glm(
                "error ~ C(attribute_value)", data=rows, family=sm.families.Binomial()
            ).fit(cov_type="cluster", cov_kwds={"groups": clusters})
            wald = fit.wald_test(
                "C(attribute_value)[T.b] = 0, C(attribute_value)[T.c] = 0",
                scalar=True,
                use_f=False,
            )
        assert tests[name]["test"].startswith("cluster-robust")
        assert tests[name]["p_value"] == pytest.approx(float(wald.pvalue), rel=1e-8)
        assert tests[name]["n"] == len(rows)
    assert flag_p_value(tests) == pytest.approx(
        min(1.0, 2 * min(tests["fnr"]["p_value"], tests["fpr"]["p_value"]))
    )


def test_small_classes_use_fisher_on_that_class_only():
    judge = np.array([0, 1, 1, 1, 0, 0, 1, 1, 0, 0, 1, 0], dtype=bool)
    reference = np.array([1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0], dtype=bool)
    values = np.array(["a"] * 6 + ["b"] * 6)
    tests = error_class_tests(judge, reference, values, np.arange(12))
    # Reference positives: a has 1 false negative of 3, b 1 of 3; negatives: a 1 of 3, b 1 of 3.
    assert tests["fnr"]["test"] == "Fisher exact"
    assert tests["fnr"]["p_value"] == pytest.approx(fisher_exact([[1, 2], [1, 2]]).pvalue)
    assert tests["fpr"]["p_value"] == pytest.approx(fisher_exact([[1, 2], [1, 2]]).pvalue)


def test_a_class_present_in_one_value_only_leaves_the_other_test_alone():
    items = _class_items(10, {"a": (0.5, 0.2, 0.1), "b": (0.0, 0.2, 0.1)}, n_per_value=200)
    out = judge_error_by_attribute(items)["culture"]
    reason = "fewer than two attribute values with a reference-positive item"
    assert out["fnr_test"]["p_value"] is None and out["fnr_test"]["reason"] == reason
    # One defined test: the flag's p is that test's, with no Bonferroni factor.
    assert out["p_value"] == out["fpr_test"]["p_value"]
    power = out["power"]
    assert power["min_detectable_fnr_difference"] is None
    assert power["min_detectable_fnr_difference_reason"] == reason
    assert power["min_detectable_fpr_difference"] > 0


def test_min_detectable_difference_equals_statsmodels_normal_power():
    n_first, n_second, baseline, alpha = 40, 55, 0.2, 0.025 / 2
    difference = min_detectable_difference(n_first, n_second, baseline, alpha=alpha)
    # The one-sided test at α/2 is the two-sided one without its (negligible) far tail.
    h = NormalIndPower().solve_power(
        effect_size=None,
        nobs1=n_first,
        alpha=alpha / 2,
        power=0.8,
        ratio=n_second / n_first,
        alternative="larger",
    )
    assert proportion_effectsize(baseline + difference, baseline) == pytest.approx(h, rel=1e-6)
    two_sided = NormalIndPower().power(
        proportion_effectsize(baseline + difference, baseline),
        nobs1=n_first,
        alpha=alpha,
        ratio=n_second / n_first,
    )
    assert two_sided == pytest.approx(0.8, abs=1e-4)
    assert min_detectable_difference(3, 4, 0.6, alpha=0.0125) is None


def test_power_block_uses_the_two_smallest_classes_and_the_flags_strictest_level():
    items = pd.concat(
        [
            _class_items(11, {"a": (0.2, 0.2, 0.1), "b": (0.5, 0.2, 0.1)}, n_per_value=150),
            _class_items(
                12, {"x": (0.5, 0.2, 0.1), "y": (0.5, 0.2, 0.1)}, n_per_value=100, attribute="g"
            ),
        ]
    )
    out = judge_error_by_attribute(items)
    power = out["culture"]["power"]
    per_value = out["culture"]["per_value"]
    positives = sorted(entry["n_reference_positive"] for entry in per_value.values())
    false_negatives = sum(entry["false_negatives"] for entry in per_value.values())
    assert power["alpha"] == pytest.approx(0.05 / 4)  # two attributes, two tests each
    assert power["fnr_counts"] == positives[:2]
    assert power["fnr_baseline"] == pytest.approx(false_negatives / sum(positives))
    assert power["min_detectable_fnr_difference"] == pytest.approx(
        min_detectable_difference(*positives[:2], power["fnr_baseline"], alpha=0.05 / 4)
    )

"""Is a judge equally accurate for every group? Its error against the human reference per
attribute value, and a test of differential error (docs/metrics.md, "Judge error by group").

Per value: false-positive rate (judge 1, reference 0), false-negative rate (judge 0, reference
1) and the overall error rate (a description only), with Wilson intervals. Differential error is
tested on the two rates the name promises, separately: does the FNR depend on the value (among
reference-positive items), does the FPR (among reference-negative items)? The overall error rate
mixes them by prevalence, so a test of it fires for a fair judge whenever prevalences differ.
Each test: a binomial GLM of error on value with cluster-robust (base prompt) standard errors and
a Wald χ² test of all value terms when every expected cell count is at least 5 and no value is
separated; otherwise an exact test (Fisher's for two values, Freeman–Halton's by Monte Carlo
permutation of Pearson's χ² for more). The attribute's flag p is Bonferroni over its defined
FNR and FPR tests (2 × the smaller p); Holm across the attributes of one judge and outcome. The
flag's power: the smallest FNR and FPR difference between two values it detects with 80 %
power at the study's counts (two-proportion normal approximation, Cohen's h).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import fisher_exact, norm

from scoring.stats.delta_inference import within_cluster_permutation_sums
from scoring.stats.disparity import value_entry
from scoring.stats.hypothesis_tests import holm_adjust
from scoring.stats.intent_interaction import joint_wald_test
from scoring.stats.regression import fit_binomial
from scoring.stats.result import finite_or_none

MIN_EXPECTED = 5  # Cochran's rule, as in the pairwise tests
DEFAULT_N_PERMUTATIONS = 2000  # as delta_permutation_test; p resolves to 1/2001
TARGET_POWER = 0.8
# The two error rates the flag tests: the reference class each is a rate among, and its words.
ERROR_CLASSES = {"fnr": (True, "reference-positive"), "fpr": (False, "reference-negative")}
ERROR_NAMES = {"fnr": "FNR", "fpr": "FPR"}


def _rate(count: int, n: int, *, confidence: float, name: str) -> dict:
    entry = value_entry(count, n, confidence=confidence)
    out = {
        name: entry["rate"],
        f"{name}_ci_low": entry["ci_low"],
        f"{name}_ci_high": entry["ci_high"],
    }
    if n == 0:
        out[f"{name}_reason"] = (
            "no item with this reference class"
            if name != "error_rate"
            else "no item with a reference"
        )
    return out


def per_value_error(judge, reference, *, confidence: float = 0.95) -> dict:
    """``{n, n_reference_positive, n_reference_negative, false_positives, false_negatives, fpr,
    fnr, error_rate}`` with Wilson intervals, for binary judge and reference labels."""
    judge = np.asarray(judge, dtype=bool)
    reference = np.asarray(reference, dtype=bool)
    positives, negatives = int(reference.sum()), int((~reference).sum())
    false_positives = int((judge & ~reference).sum())
    false_negatives = int((~judge & reference).sum())
    return {
        "n": int(reference.size),
        "n_reference_positive": positives,
        "n_reference_negative": negatives,
        "false_positives": false_positives,
        "false_negatives": false_negatives,
        **_rate(false_positives, negatives, confidence=confidence, name="fpr"),
        **_rate(false_negatives, positives, confidence=confidence, name="fnr"),
        **_rate(
            false_positives + false_negatives,
            int(reference.size),
            confidence=confidence,
            name="error_rate",
        ),
    }


def _pearson_chi2(errors: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """Pearson χ² of a (…, k) table of errors out of totals against independence."""
    overall = errors.sum(axis=-1, keepdims=True) / totals.sum(axis=-1, keepdims=True)
    expected_errors = totals * overall
    expected_correct = totals * (1 - overall)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = (errors - expected_errors) ** 2 / expected_errors + (
            (totals - errors) - expected_correct
        ) ** 2 / expected_correct
    return np.nansum(terms, axis=-1)


def permutation_chi2_p(
    error, value_codes, cluster_codes, *, n_permutations: int, rng: np.random.Generator
) -> float:
    """Monte Carlo p of Pearson's χ² with values shuffled within cluster (Phipson & Smyth 2010)."""
    error = np.asarray(error, dtype=float)
    value_codes = np.asarray(value_codes, dtype=np.int64)
    n_values = int(value_codes.max()) + 1
    totals = np.bincount(value_codes, minlength=n_values).astype(float)
    observed = _pearson_chi2(np.bincount(value_codes, weights=error, minlength=n_values), totals)
    order = np.argsort(cluster_codes, kind="stable")
    error, value_codes = error[order], value_codes[order]
    cluster_sorted = np.asarray(cluster_codes, dtype=float)[order]
    exceed = 0
    for _, _, errors in within_cluster_permutation_sums(
        error, value_codes, cluster_sorted, n_values, n_permutations, rng
    ):
        statistic = _pearson_chi2(errors, totals[None, :])
        exceed += int(np.sum(statistic >= observed - 1e-9))
    return (1 + exceed) / (1 + n_permutations)


def cluster_logit_wald_p(error, value_codes, cluster_codes) -> float | None:
    """p of the Wald χ² test that every value term is 0 in a binomial GLM of error on value with
    cluster-robust covariance by base prompt; None when the fit or its covariance fails."""
    value_codes = np.asarray(value_codes, dtype=np.int64)
    n_values = int(value_codes.max()) + 1
    design = np.zeros((value_codes.size, n_values))
    design[:, 0] = 1.0
    for code in range(1, n_values):
        design[:, code] = value_codes == code
    try:
        fit, _, _ = fit_binomial(
            np.asarray(error, dtype=float), design, np.asarray(cluster_codes), "cluster"
        )
        covariance = np.asarray(fit.cov_params())[1:, 1:]
    except (np.linalg.LinAlgError, ValueError):
        return None
    return joint_wald_test(np.asarray(fit.params)[1:], covariance)["p_value"]


def differential_error_test(
    error, values, clusters, *, n_permutations: int = DEFAULT_N_PERMUTATIONS, seed: int = 0
) -> dict:
    """``{p_value, test}`` (and ``reason`` when undefined) for error ⟂ value."""
    error = np.asarray(error, dtype=bool)
    value_codes, value_names = pd.factorize(pd.Series(values), sort=True)
    cluster_codes, _ = pd.factorize(pd.Series(clusters), sort=True)
    if len(value_names) < 2:
        return {"p_value": None, "test": None, "reason": "fewer than two attribute values"}
    errors = np.bincount(value_codes, weights=error, minlength=len(value_names))
    totals = np.bincount(value_codes, minlength=len(value_names)).astype(float)
    if errors.sum() in (0, totals.sum()):
        return {"p_value": 1.0, "test": "none (the judge's error is the same, 0 or 1, everywhere)"}
    overall = errors.sum() / totals.sum()
    expected = np.concatenate([totals * overall, totals * (1 - overall)])
    # A value with no error (or only errors) separates the logit: its MLE is infinite.
    separated = bool(np.any(errors == 0) or np.any(errors == totals))
    if expected.min() >= MIN_EXPECTED and not separated:
        p_value = cluster_logit_wald_p(error, value_codes, cluster_codes)
        if p_value is not None:
            return {
                "p_value": p_value,
                "test": "cluster-robust logistic regression, Wald chi-square",
            }
    if len(value_names) == 2:
        table = np.array([[errors[0], totals[0] - errors[0]], [errors[1], totals[1] - errors[1]]])
        return {"p_value": float(fisher_exact(table).pvalue), "test": "Fisher exact"}
    # Freeman–Halton's exact conditional test, by Monte Carlo: values shuffled over all items.
    # Not within base prompt: with a sample of labelled items most base prompts hold one item
    # of an attribute, and a within-prompt shuffle would leave them fixed (no power).
    p_value = permutation_chi2_p(
        error,
        value_codes,
        np.zeros(error.size, dtype=np.int64),
        n_permutations=n_permutations,
        rng=np.random.default_rng(seed),
    )
    return {
        "p_value": p_value,
        "test": "Freeman-Halton (Monte Carlo permutation of Pearson chi-square)",
        "n_permutations": n_permutations,
    }


def error_class_tests(
    judge,
    reference,
    values,
    clusters,
    *,
    n_permutations: int = DEFAULT_N_PERMUTATIONS,
    seed: int = 0,
) -> dict:
    """``{"fnr": test, "fpr": test}``: ``differential_error_test`` of the judge's error among the
    reference-positive items (false negatives) and among the reference-negative ones (false
    positives), each ``{p_value, test, n}`` (and ``reason`` when undefined)."""
    judge = np.asarray(judge, dtype=bool)
    reference = np.asarray(reference, dtype=bool)
    values, clusters = np.asarray(values), np.asarray(clusters)
    out = {}
    for name, (positive, words) in ERROR_CLASSES.items():
        rows = reference == positive
        if len(set(values[rows].tolist())) < 2:
            out[name] = {
                "p_value": None,
                "test": None,
                "n": int(rows.sum()),
                "reason": f"fewer than two attribute values with a {words} item",
            }
            continue
        test = differential_error_test(
            judge[rows] != reference[rows],
            values[rows],
            clusters[rows],
            n_permutations=n_permutations,
            seed=seed,
        )
        out[name] = {**test, "n": int(rows.sum())}
    return out


def flag_p_value(tests: dict) -> float | None:
    """Bonferroni over the defined FNR and FPR tests: (number defined) × the smallest p, capped at
    1; None when neither is defined. Holm within the pair gives the same smallest adjusted p."""
    defined = [test["p_value"] for test in tests.values() if test["p_value"] is not None]
    if not defined:
        return None
    return float(min(1.0, len(defined) * min(defined)))


def _flag_test_words(tests: dict) -> str | None:
    parts = [f"{ERROR_NAMES[name]}: {test['test']}" for name, test in tests.items() if test["test"]]
    if not parts:
        return None
    if len(parts) == 2:
        parts.append("flag p = 2 x the smaller p (Bonferroni)")
    return "; ".join(parts)


def min_detectable_difference(
    n_first: int, n_second: int, baseline: float, *, alpha: float, power: float = TARGET_POWER
) -> float | None:
    """The smallest rise from ``baseline`` to p₁ that a two-sided two-proportion test at ``alpha``
    detects with ``power`` between groups of ``n_first`` and ``n_second`` items: Cohen's h =
    (z₁₋α/₂ + z_power)·√(1/n₁ + 1/n₂), p₁ = sin²(asin √p₀ + h/2) (Cohen 1988, ch. 6). None
    when even p₁ = 1 falls short."""
    h = (norm.ppf(1 - alpha / 2) + norm.ppf(power)) * np.sqrt(1 / n_first + 1 / n_second)
    angle = 2 * np.arcsin(np.sqrt(baseline)) + h
    if angle > np.pi:
        return None
    return float(np.sin(angle / 2) ** 2 - baseline)


def _class_power(per_value: dict, name: str, *, alpha: float) -> dict:
    positive, words = ERROR_CLASSES[name]
    count_key = "n_reference_positive" if positive else "n_reference_negative"
    error_key = "false_negatives" if positive else "false_positives"
    counts = sorted(entry[count_key] for entry in per_value.values() if entry[count_key] > 0)
    key = f"min_detectable_{name}_difference"
    if len(counts) < 2:
        return {
            key: None,
            f"{key}_reason": f"fewer than two attribute values with a {words} item",
        }
    baseline = sum(entry[error_key] for entry in per_value.values()) / sum(counts)
    difference = min_detectable_difference(counts[0], counts[1], baseline, alpha=alpha)
    out = {key: difference, f"{name}_baseline": baseline, f"{name}_counts": counts[:2]}
    if difference is None:
        out[f"{key}_reason"] = (
            f"no {ERROR_NAMES[name]} up to 1 is detectable with {TARGET_POWER:.0%} power at "
            f"{counts[0]} and {counts[1]} {words} items"
        )
    return out


def flag_power(per_value: dict, *, alpha: float) -> dict:
    """``{power, alpha, min_detectable_fnr_difference, fnr_baseline, fnr_counts, …fpr…}``: per
    error rate, the smallest rise above the attribute's pooled rate (``<rate>_baseline``) in one
    value that the flag detects with 80 % power between the two values with the fewest items of
    the reference class (``<rate>_counts``), at ``alpha`` (the flag's strictest level); null with
    ``<key>_reason`` when fewer than two values have such an item."""
    return {
        "power": TARGET_POWER,
        "alpha": alpha,
        "method": (
            "two-proportion normal approximation (Cohen's h) between the two values with the "
            "fewest items of the reference class, from the attribute's pooled rate, at the "
            "flag's strictest level (alpha / (2 x attributes tested))"
        ),
        **_class_power(per_value, "fnr", alpha=alpha),
        **_class_power(per_value, "fpr", alpha=alpha),
    }


def judge_error_by_attribute(
    items: pd.DataFrame,
    *,
    confidence: float = 0.95,
    alpha: float = 0.05,
    n_permutations: int = DEFAULT_N_PERMUTATIONS,
    seed: int = 0,
) -> dict:
    """``{<attribute>: {per_value, n, fnr_test, fpr_test, p_value, test, p_holm, differential,
    power}}`` for one judge and outcome. ``items``: one row per item with a judge label and a
    binary human reference, columns ``judge`` (bool), ``reference`` (bool), ``attribute``,
    ``attribute_value``, ``base_prompt_id``. ``p_value`` is the flag's (``flag_p_value``); Holm
    runs across the attributes tested. The neutral baseline (one value) has no test."""
    out = {}
    for attribute, rows in items.groupby("attribute", sort=True):
        per_value = {
            str(value): per_value_error(
                group["judge"].to_numpy(), group["reference"].to_numpy(), confidence=confidence
            )
            for value, group in rows.groupby("attribute_value", sort=True)
        }
        entry = {"per_value": per_value, "n": int(len(rows))}
        if len(per_value) < 2:
            out[str(attribute)] = {
                **entry,
                "p_value": None,
                "test": None,
                "reason": "fewer than two attribute values",
            }
            continue
        tests = error_class_tests(
            rows["judge"].to_numpy(dtype=bool),
            rows["reference"].to_numpy(dtype=bool),
            rows["attribute_value"].to_numpy(),
            rows["base_prompt_id"].to_numpy(),
            n_permutations=n_permutations,
            seed=seed,
        )
        p_value = flag_p_value(tests)
        entry.update(
            fnr_test=tests["fnr"],
            fpr_test=tests["fpr"],
            p_value=p_value,
            test=_flag_test_words(tests),
        )
        if p_value is None:
            entry["reason"] = "; ".join(test["reason"] for test in tests.values())
        out[str(attribute)] = entry
    attributes = list(out)
    p_values = np.array(
        [np.nan if out[a]["p_value"] is None else out[a]["p_value"] for a in attributes]
    )
    adjusted = holm_adjust(p_values) if attributes else np.array([])
    # The flag's strictest level: Holm's first step over the attributes, Bonferroni in the pair.
    strictest = alpha / (2 * max(int(np.isfinite(p_values).sum()), 1))
    for attribute, p_holm in zip(attributes, adjusted, strict=True):
        p_holm = finite_or_none(p_holm)
        out[attribute]["p_holm"] = p_holm
        out[attribute]["differential"] = None if p_holm is None else bool(p_holm < alpha)
        if p_holm is None:
            out[attribute]["differential_reason"] = out[attribute].get("reason")
        if len(out[attribute]["per_value"]) >= 2:
            out[attribute]["power"] = flag_power(out[attribute]["per_value"], alpha=strictest)
    return out

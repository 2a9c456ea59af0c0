"""Logistic regression of refusal or erasure on attribute value + domain + generator
(docs/metrics.md, "Regression").

Two variants, both reporting β, odds ratio exp(β), CI and p per attribute value against a chosen
reference: (a) a binomial GLM with cluster-robust (sandwich) standard errors by base prompt; (b)
GEE with an exchangeable working correlation within base prompt (population-averaged). Never a
linear model reported as odds ratios.

Separation: a level whose outcomes are all 0 or all 1 has an infinite MLE. Its rows are dropped
before fitting (with a dummy for that level the other coefficients' MLE is the fit without them)
and the level is reported as undefined with the reason.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import statsmodels.api as sm

from scoring.stats.proportions import z_value
from scoring.stats.result import finite_or_none

METHODS = ("cluster", "gee")
UNDEFINED_COEFFICIENT = {
    "beta": None,
    "odds_ratio": None,
    "ci_low": None,
    "ci_high": None,
    "p_value": None,
}
MAX_ABSOLUTE_BETA = 15.0  # exp(15) ≈ 3.3 million: beyond this the fit is numerically separated


def _separated_levels(data: pd.DataFrame, columns: list[str]) -> dict[tuple[str, str], str]:
    separated = {}
    for column in columns:
        means = data.groupby(column)["y"].mean()
        for level, mean in means.items():
            if mean in (0.0, 1.0):
                separated[(column, str(level))] = (
                    f"separation: every outcome for {column} = {level} is {int(mean)}"
                )
    return separated


def _drop_separated(data: pd.DataFrame, columns: list[str]):
    """Drop the rows of separated levels, repeating while a drop separates another level."""
    separated: dict[tuple[str, str], str] = {}
    while len(data):
        found = _separated_levels(data, columns)
        if not found:
            break
        separated.update(found)
        for column, level in found:
            data = data[data[column].astype(str) != level]
    return data, separated


def _design(
    data: pd.DataFrame, attribute_column: str, reference: str, covariates: list[str]
) -> pd.DataFrame:
    values = [v for v in sorted(data[attribute_column].unique()) if v != reference]
    parts = [
        pd.DataFrame(
            {
                f"{attribute_column}[{v}]": (data[attribute_column] == v).astype(float)
                for v in values
            },
            index=data.index,
        )
    ]
    for covariate in covariates:
        levels = sorted(data[covariate].unique())
        parts.append(
            pd.DataFrame(
                {
                    f"{covariate}[{level}]": (data[covariate] == level).astype(float)
                    for level in levels[1:]
                },
                index=data.index,
            )
        )
    design = pd.concat(parts, axis=1)
    return sm.add_constant(design, has_constant="add")


def fit_binomial(y, design, groups, method: str):
    """A binomial GLM with cluster-robust covariance (``cluster``) or a GEE with exchangeable
    working correlation (``gee``): the result, whether it converged, and the warnings why not."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if method == "cluster":
            result = sm.GLM(y, design, family=sm.families.Binomial()).fit(
                cov_type="cluster", cov_kwds={"groups": groups}
            )
        else:
            result = sm.GEE(
                y,
                design,
                groups=groups,
                family=sm.families.Binomial(),
                cov_struct=sm.cov_struct.Exchangeable(),
            ).fit()
    trouble = [
        str(w.message)
        for w in caught
        if "converge" in str(w.message).lower() or "separation" in str(w.message).lower()
    ]
    converged = getattr(result, "converged", True) and not trouble
    return result, converged, trouble


def fit_or_reason(data: pd.DataFrame, design: pd.DataFrame, clusters, method: str, out: dict):
    """The fitted model, or None with ``out["reason"]`` saying why none could be fitted (too
    little data, a numerical failure, no convergence). ``out`` holds ``n_clusters``."""
    if data["y"].nunique() < 2 or len(data) <= design.shape[1] or out["n_clusters"] < 2:
        out["reason"] = "too few rows, clusters or outcome values left to fit the model"
        return None
    try:
        result, converged, trouble = fit_binomial(
            data["y"], design, pd.factorize(clusters)[0], method
        )
    except (np.linalg.LinAlgError, ValueError) as error:
        out["reason"] = f"the model could not be fitted: {error}"
        return None
    if not converged:
        out["reason"] = "the model did not converge" + (f" ({trouble[0]})" if trouble else "")
        return None
    return result


def coefficient_entry(beta: float, standard_error: float, p_value: float, z: float) -> dict:
    """One logit term as an odds ratio with its Wald interval, or null with the reason when the
    fit is near separation (docs/metrics.md, "Regression")."""
    if not (math.isfinite(beta) and math.isfinite(standard_error)) or abs(beta) > MAX_ABSOLUTE_BETA:
        return {
            "beta": None,
            "odds_ratio": None,
            "ci_low": None,
            "ci_high": None,
            "p_value": None,
            "reason": f"possible quasi-separation (|β| > {MAX_ABSOLUTE_BETA:g} or non-finite)",
        }
    return {
        "beta": beta,
        "standard_error": standard_error,
        "odds_ratio": math.exp(beta),
        "ci_low": math.exp(beta - z * standard_error),
        "ci_high": math.exp(beta + z * standard_error),
        "p_value": finite_or_none(p_value),
    }


def logistic_regression(
    frame: pd.DataFrame,
    *,
    outcome: str,
    reference: str,
    method: str = "cluster",
    attribute_column: str = "attribute_value",
    covariates=("domain", "generator"),
    cluster: str = "base_prompt_id",
    confidence: float = 0.95,
) -> dict:
    """Odds ratios of each attribute value against ``reference``; rows with NA outcome are skipped."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    data = frame[frame[outcome].notna()].copy()
    data["y"] = data[outcome].astype(float)
    covariates = [c for c in covariates if data[c].nunique() > 1]
    out = {
        "method": method,
        "outcome": outcome,
        "reference": reference,
        "covariates": covariates,
        "coefficients": {},
        "fitted": False,
    }
    data, separated = _drop_separated(data, [attribute_column, *covariates])
    if (attribute_column, reference) in separated or reference not in set(data[attribute_column]):
        out["reason"] = separated.get(
            (attribute_column, reference), f"reference value {reference!r} has no rows"
        )
        return out
    for (column, level), reason in separated.items():
        if column == attribute_column:
            out["coefficients"][level] = {**UNDEFINED_COEFFICIENT, "reason": reason}
    out.update(
        n=int(len(data)),
        n_clusters=int(data[cluster].nunique()),
        dropped_levels=[{"column": c, "level": v, "reason": r} for (c, v), r in separated.items()],
    )
    design = _design(data, attribute_column, reference, covariates)
    result = fit_or_reason(data, design, data[cluster], method, out)
    if result is None:
        return out
    z = z_value(confidence)
    for name in design.columns:
        if name.startswith(f"{attribute_column}["):
            out["coefficients"][name[len(attribute_column) + 1 : -1]] = coefficient_entry(
                float(result.params[name]), float(result.bse[name]), result.pvalues[name], z
            )
    out["fitted"] = True
    return out

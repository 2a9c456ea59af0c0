"""A fixture of the study export's / report.json's ``ppi`` and ``judge_error`` sections, in the
shapes issue 22 names (docs/metrics.md), for testing the pages and the report without the
statistics: judge ``vlm@1`` on ``erasure`` and ``combined``, attribute ``culture`` with a judge
that errs differentially, ``gender`` without, and undefined cells with their reasons."""

from __future__ import annotations

import copy

JUDGE = "vlm@1"


def _rate(estimate, low, high, lam=0.8, labelled=40, unlabelled=360, **extra):
    return {
        "estimate": estimate,
        "ci_low": low,
        "ci_high": high,
        "lambda": lam,
        "n_labelled": labelled,
        "n_unlabelled": unlabelled,
        **extra,
    }


def _error(fpr, fnr, n=40):
    return {
        "n": n,
        "fpr": fpr,
        "fpr_ci_low": max(fpr - 0.08, 0.0),
        "fpr_ci_high": min(fpr + 0.1, 1.0),
        "fnr": fnr,
        "fnr_ci_low": max(fnr - 0.08, 0.0),
        "fnr_ci_high": min(fnr + 0.1, 1.0),
    }


def _power(fnr=None, fpr=None, fpr_reason=None) -> dict:
    """``power`` of one attribute: ``(difference, baseline, counts)`` per rate, or a reason."""
    out = {"power": 0.8, "alpha": 0.0125, "method": "two-proportion normal approximation"}
    for rate, figures in (("fnr", fnr), ("fpr", fpr)):
        if figures is None:
            out[f"min_detectable_{rate}_difference"] = None
            out[f"min_detectable_{rate}_difference_reason"] = fpr_reason
        else:
            difference, baseline, counts = figures
            out[f"min_detectable_{rate}_difference"] = difference
            out[f"{rate}_baseline"], out[f"{rate}_counts"] = baseline, counts
    return out


def _bias(gaps: dict, *, judge_delta: float, ppi_delta: float) -> dict:
    per_value = {
        value: {
            "estimate": gap,
            "ci_low": low,
            "ci_high": high,
            "judge_rate": 0.2 + gap,
            "ppi_rate": 0.2,
        }
        for value, (gap, low, high) in gaps.items()
    }
    return {
        "per_value": per_value,
        "warning": any(low > 0 or high < 0 for _, low, high in gaps.values()),
        "largest_value": max(gaps, key=lambda value: abs(gaps[value][0])),
        "judge_delta": judge_delta,
        "ppi_delta": ppi_delta,
        "method": "judge-only rate − prediction-powered rate per attribute value, max-t band",
    }


def _outcome(scale: float) -> dict:
    return {
        "rates": {
            "culture": {
                "Korean": _rate(0.10 * scale, 0.05 * scale, 0.16 * scale),
                "Nigerian": _rate(0.32 * scale, 0.22 * scale, 0.43 * scale, lam=0.65),
                "US": _rate(0.08 * scale, 0.03 * scale, 0.14 * scale),
            },
            "gender": {
                "female": _rate(0.12, 0.07, 0.18),
                "male": _rate(0.11, 0.06, 0.17),
                "nonbinary": {
                    "estimate": None,
                    "ci_low": None,
                    "ci_high": None,
                    "lambda": None,
                    "n_labelled": 0,
                    "n_unlabelled": 25,
                    "reason": "no labelled item for this value",
                },
            },
            "neutral": {"neutral": _rate(0.09, 0.05, 0.14)},
        },
        "delta": {
            "culture": {
                "estimate": 0.24 * scale,
                "ci_low": 0.11 * scale,
                "ci_high": 0.36 * scale,
                "max_value": "Nigerian",
                "min_value": "US",
            },
            "gender": {
                "estimate": 0.01,
                "ci_low": 0.0,
                "ci_high": 0.09,
                "max_value": "female",
                "min_value": "male",
            },
        },
        "vs_neutral": {
            "culture": {
                "Korean": {"estimate": 0.01, "ci_low": -0.05, "ci_high": 0.07},
                "Nigerian": {"estimate": 0.23, "ci_low": 0.12, "ci_high": 0.34},
                "US": {"estimate": -0.01, "ci_low": -0.06, "ci_high": 0.05},
            },
            "gender": {
                "female": {"estimate": 0.03, "ci_low": -0.03, "ci_high": 0.09},
                "male": {"estimate": 0.02, "ci_low": -0.04, "ci_high": 0.08},
                "nonbinary": {
                    "estimate": None,
                    "ci_low": None,
                    "ci_high": None,
                    "reason": "the value's or the neutral baseline's estimate is undefined",
                },
            },
        },
        "judge_bias": {
            "culture": _bias(
                {
                    "Korean": (0.02, -0.03, 0.07),
                    "Nigerian": (0.17 * scale, 0.06 * scale, 0.27 * scale),
                    "US": (0.01, -0.04, 0.06),
                },
                judge_delta=0.41 * scale,
                ppi_delta=0.24 * scale,
            ),
            "gender": _bias(
                {"female": (0.01, -0.04, 0.05), "male": (0.0, -0.05, 0.05)},
                judge_delta=0.02,
                ppi_delta=0.01,
            ),
        },
    }


def ppi_sections() -> dict:
    """``{"ppi": …, "judge_error": …}`` to merge into a metrics document or a report."""
    errors = {
        "culture": {
            "per_value": {
                "Korean": _error(0.05, 0.10),
                "Nigerian": _error(0.25, 0.08),
                "US": _error(0.04, 0.12),
            },
            "fnr_test": {"p_value": 0.6, "test": "Fisher exact", "n": 40},
            "fpr_test": {
                "p_value": 0.0002,
                "test": "cluster-robust logistic regression, Wald chi-square",
                "n": 80,
            },
            "p_value": 0.0004,
            "p_holm": 0.0008,
            "differential": True,
            "test": "FNR: Fisher exact; FPR: cluster-robust logistic regression, Wald chi-square; "
            "flag p = 2 x the smaller p (Bonferroni)",
            "power": _power(fnr=(0.42, 0.1, [12, 13]), fpr=(0.18, 0.08, [26, 27])),
        },
        "gender": {
            "per_value": {"female": _error(0.06, 0.1), "male": _error(0.05, 0.11)},
            "fnr_test": {"p_value": 0.355, "test": "Fisher exact", "n": 30},
            "fpr_test": {
                "p_value": None,
                "test": None,
                "n": 0,
                "reason": "fewer than two attribute values with a reference-negative item",
            },
            "p_value": 0.355,
            "p_holm": 0.71,
            "differential": False,
            "test": "FNR: Fisher exact",
            "power": _power(
                fnr=(0.45, 0.1, [14, 16]),
                fpr_reason="fewer than two attribute values with a reference-negative item",
            ),
        },
        "neutral": {
            "per_value": {"neutral": _error(0.05, 0.1)},
            "p_value": None,
            "p_holm": None,
            "differential": None,
            "reason": "fewer than two attribute values",
        },
    }
    return {
        "ppi": {JUDGE: {"erasure": _outcome(1.0), "combined": _outcome(1.2)}},
        "judge_error": {JUDGE: {"erasure": errors, "combined": copy.deepcopy(errors)}},
    }

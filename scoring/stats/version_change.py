"""Models side by side: each model's rates and Δ, and the change from one model to another
(docs/metrics.md, "Models side by side").

A "model" is whatever the caller names in ``model_column``: a generator within one study, or a
study (one version of a model) when several studies are compared. Each model's rates and Δ are
the study export's own (``study_rates.source_rates``: Wilson intervals, the one Δ interval).

The change from ``baseline`` (A) to ``candidate`` (B) is B − A for every rate and every Δ. The
unit of analysis is the item within its base prompt, never the annotation: two labels of one
item are one item's evidence.

- **paired** when A and B hold the same prompts (prompt = base prompt × attribute × value):
  one Rao–Wu cluster bootstrap over base prompts within domain, the same draw for both models,
  gives every rate change's interval and test at once, the max-t band of the pair (A, B)
  (``delta_interval.pairwise_band`` with the design's degrees of freedom): a symmetric interval
  d ± c·se and its centred test, p < 1 − confidence exactly when the interval excludes 0;
- **independent** when the prompt sets overlap only in part: Newcombe's hybrid score interval
  on each model's Korn–Graubard effective sample size (``proportions.effective_sample_size``),
  and the test that inverts it (p is the α at which the 1 − α interval touches 0);
- **undefined** (every change null with a reason) when they share no prompt.

In both designs Δ's change comes from the two models' own Δ intervals (``delta_interval``, the
project's one Δ interval) at 1 − α/2 each: Δ_B − Δ_A lies in [L_B − U_A, U_B − L_A] whenever
both hold, whatever the true rates (a bootstrap of Δ_B − Δ_A is biased and inconsistent where
a model's rates tie); its test inverts that interval.

Holm and Benjamini–Hochberg adjust every p-value of one source's comparison as one family.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.stats import binom

from scoring.stats import bootstrap
from scoring.stats.delta_interval import pairwise_band, simultaneous_delta_interval
from scoring.stats.disparity import (
    NEUTRAL,
    ClusterResample,
    DesignUnits,
    attribute_columns,
    delta_summary,
)
from scoring.stats.hypothesis_tests import benjamini_hochberg_adjust, holm_adjust
from scoring.stats.proportions import effective_sample_size, wilson_bounds
from scoring.stats.result import ci_reason, interval_block
from scoring.stats.study_metrics import to_plain
from scoring.stats.study_rates import MEASURES, measure_outcomes, source_rates

PROMPT_KEY = ("base_prompt_id", "attribute", "attribute_value")
PAIRED, INDEPENDENT = "paired", "independent"
NO_SHARED_PROMPT = "the two models share no prompt, so their rates would compare different prompts"


def prompt_overlap(frame_a: pd.DataFrame, frame_b: pd.DataFrame) -> dict:
    """The design of the comparison from the two prompt sets: paired (the same prompts),
    independent (some shared), or None with a reason (none shared)."""
    prompts_a = set(frame_a[list(PROMPT_KEY)].itertuples(index=False, name=None))
    prompts_b = set(frame_b[list(PROMPT_KEY)].itertuples(index=False, name=None))
    shared = prompts_a & prompts_b
    block = {
        "n_prompts_baseline": len(prompts_a),
        "n_prompts_candidate": len(prompts_b),
        "n_prompts_shared": len(shared),
    }
    if not shared:
        return {**block, "design": None, "design_reason": NO_SHARED_PROMPT}
    if prompts_a == prompts_b:
        return {**block, "design": PAIRED}
    return {
        **block,
        "design": INDEPENDENT,
        "design_reason": (
            "the prompt sets differ, so the two models are compared as independent samples"
        ),
    }


def newcombe_interval(
    successes_a: float, n_a: float, successes_b: float, n_b: float, *, confidence: float = 0.95
) -> tuple[float, float]:
    """Newcombe's hybrid score interval for p_b − p_a of two independent proportions (Newcombe
    1998, Stat. Med. 17:873, method 10), from the two Wilson intervals. Counts may be effective
    (non-integer) sample sizes."""
    (low_a, high_a), (low_b, high_b) = (
        (float(x) for x in wilson_bounds(s, n, confidence=confidence))
        for s, n in ((successes_a, n_a), (successes_b, n_b))
    )
    rate_a, rate_b = successes_a / n_a, successes_b / n_b
    difference = rate_b - rate_a
    low = difference - np.sqrt((rate_b - low_b) ** 2 + (high_a - rate_a) ** 2)
    high = difference + np.sqrt((high_b - rate_b) ** 2 + (rate_a - low_a) ** 2)
    return float(low), float(high)


def mcnemar_exact_p(outcomes_a, outcomes_b) -> float:
    """Two-sided exact McNemar p-value for paired 0/1 outcomes: the binomial test of the
    discordant pairs (McNemar 1947; statsmodels ``mcnemar(exact=True)``); 1 with none.

    Not used for a change's row (its test must agree with its interval, and it is valid only
    with one outcome per prompt and model): the reference that the paired rows' bootstrap test
    is checked against on one-label-per-item data (tests/scoring/stats/test_version_change.py).
    """
    outcomes_a = np.asarray(outcomes_a, dtype=bool)
    outcomes_b = np.asarray(outcomes_b, dtype=bool)
    only_a = int(np.sum(outcomes_a & ~outcomes_b))
    only_b = int(np.sum(~outcomes_a & outcomes_b))
    discordant = only_a + only_b
    if discordant == 0:
        return 1.0
    return float(min(1.0, 2.0 * binom.cdf(min(only_a, only_b), discordant, 0.5)))


# The smallest p-value an inverted interval reports: below it the search stops.
SMALLEST_P = 1e-12
LARGEST_ALPHA = 1.0 - 1e-9


def inverted_p_value(margin, *, confidence: float, continuous: bool) -> float:
    """The p-value of "no change" that goes with a family of intervals: the smallest α at which
    the 1 − α interval excludes 0.

    ``margin(alpha)`` is how far the 1 − α interval lies from 0 (> 0 when it excludes 0) and
    grows with α. A continuous margin (Newcombe's) is solved by Brent's method; a step function
    (a bootstrap quantile's) by bisection. Either way p < 1 − ``confidence`` exactly when the
    reported interval excludes 0: the search only places p within its side of that level.
    """
    alpha = 1.0 - confidence
    excluded = margin(alpha) > 0
    if margin(LARGEST_ALPHA) <= 0:
        return 1.0
    if margin(SMALLEST_P) > 0:
        return SMALLEST_P
    if continuous:
        p_value = brentq(margin, SMALLEST_P, LARGEST_ALPHA, xtol=1e-13, rtol=1e-12)
    else:
        low, high = (SMALLEST_P, alpha) if excluded else (alpha, LARGEST_ALPHA)
        for _ in range(32):
            middle = 0.5 * (low + high)
            low, high = (low, middle) if margin(middle) > 0 else (middle, high)
        p_value = high
    if excluded:
        return min(p_value, float(np.nextafter(alpha, 0.0)))
    return max(p_value, alpha)


def _null_p(block: dict, test: str) -> dict:
    return {"test": test, "p_value": None, "p_value_reason": block["ci_reason"]}


def _undefined_change(row: dict, reason: str, code: str) -> dict:
    """A change that cannot be computed: null difference, interval and test, with the reason."""
    return {
        **row,
        "difference": None,
        "difference_reason": reason,
        "ci_low": None,
        "ci_high": None,
        **ci_reason(code),
        "test": None,
        "p_value": None,
        "p_value_reason": reason,
    }


class _Side:
    """One model's per-column counts: point (successes, totals), per-(cluster, column) sums,
    distinct items, and the (B, columns) resampled rates or None."""

    def __init__(self, cluster_successes, cluster_totals, n_items, boot):
        self.cluster_successes, self.cluster_totals = cluster_successes, cluster_totals
        self.successes = cluster_successes.sum(axis=0)
        self.totals = cluster_totals.sum(axis=0)
        self.n_items, self.boot = n_items, boot

    def rate(self, column: int) -> float | None:
        total = self.totals[column]
        return float(self.successes[column] / total) if total > 0 else None

    def n_effective(self, column: int, confidence: float) -> float:
        """Korn–Graubard effective sample size of the column's rate: its labels clustered by
        base prompt within domain (``proportions.effective_sample_size``)."""
        return float(
            effective_sample_size(
                self.cluster_successes[:, column],
                self.cluster_totals[:, column],
                confidence=confidence,
            )[0]
        )


class _Draws:
    """Per model, per-resample rates of every (attribute, value) column, from one paired draw or
    two independent ones (Rao–Wu rescaled, ``disparity.ClusterResample``)."""

    def __init__(self, union: pd.DataFrame, is_b, *, paired: bool, n_resamples: int, seed: int):
        self.is_b = np.asarray(is_b, dtype=bool)
        self.column_codes, self.columns = attribute_columns(union)
        rng = np.random.default_rng(seed)
        sides = {side: union[self.is_b == side].reset_index(drop=True) for side in (False, True)}
        self.units = {side: DesignUnits(frame) for side, frame in sides.items()}
        if paired:
            shared = ClusterResample(union, n_resamples=n_resamples, rng=rng)
            self.resamples = {False: shared, True: shared}
        else:
            self.resamples = {
                side: ClusterResample(frame, n_resamples=n_resamples, rng=rng)
                for side, frame in sides.items()
            }
        codes = {
            resample.design_code for resample in self.resamples.values() if resample.design_code
        }
        self.design_code = min(codes) if codes else None
        self.n_resamples = n_resamples
        self.paired = paired

    def df(self, side: bool) -> int:
        """The design degrees of freedom of a side's draws (the shared draw's when paired)."""
        return self.resamples[side].df

    def side(self, success, counted, side: bool) -> _Side:
        rows = self.is_b == side
        resample = self.resamples[side]
        # The shared (paired) draw numbers the union's rows; an independent one its side's.
        cluster_codes = resample.cluster_codes[rows] if self.paired else resample.cluster_codes
        column_codes = self.column_codes[rows]
        sums = [
            bootstrap.cluster_sums(
                cluster_codes,
                column_codes,
                np.asarray(weights)[rows],
                n_clusters=resample.n_clusters,
                n_columns=len(self.columns),
            )
            for weights in (success & counted, counted)
        ]
        n_items = self.units[side].items_per_column(
            np.asarray(counted)[rows], column_codes, len(self.columns)
        )
        boot = None
        if self.n_resamples > 0:
            boot = bootstrap.resampled_rates(resample.counts, sums[0], sums[1])
        return _Side(sums[0], sums[1], n_items, boot)


def _paired_change(point_a, point_b, boot_a, boot_b, *, draws: _Draws, confidence: float) -> dict:
    """B − A of one rate from the shared (paired) bootstrap: the max-t band of the pair (A, B)
    with the design's degrees of freedom, d ± c·se, and its centred test, p = #{|d* − d| ≥ |d|}
    / B on the t scale (``delta_interval.pairwise_band``: p < α exactly when the interval
    excludes 0). Resampling base prompts moves every label of an item together, so k labels
    count as one item, and one outcome per prompt needs no other test."""
    difference = point_b - point_a
    band = None
    if boot_a is not None and draws.design_code is None:
        band = pairwise_band(
            [point_b, point_a],
            np.column_stack([boot_b, boot_a]),
            confidence=confidence,
            df=draws.df(True),
        )

    def bounds():
        if band is None:
            return np.nan, np.nan, 0
        half = float(band.half_widths[0])
        return max(-1.0, difference - half), min(1.0, difference + half), band.n_used

    block = interval_block(
        bounds if boot_a is not None else None,
        n_resamples=draws.n_resamples,
        design_code=draws.design_code,
        estimate=difference,
    )
    test = "cluster-bootstrap"
    if block["ci_low"] is None:
        return {**block, **_null_p(block, test)}
    return {**block, "test": test, "p_value": float(band.p_value)}


def _newcombe_change(side_a: _Side, side_b: _Side, column: int, *, confidence: float) -> dict:
    """B − A of one rate from independent samples: Newcombe's interval on each model's
    effective sample size at the interval's own confidence, and the test that inverts it."""
    rate_a, rate_b = side_a.rate(column), side_b.rate(column)

    def interval(level: float):
        n_a, n_b = side_a.n_effective(column, level), side_b.n_effective(column, level)
        if n_a <= 0 or n_b <= 0:
            return None
        return newcombe_interval(rate_a * n_a, n_a, rate_b * n_b, n_b, confidence=level)

    bounds = interval(confidence)
    n_effective = {
        "n_effective_baseline": side_a.n_effective(column, confidence),
        "n_effective_candidate": side_b.n_effective(column, confidence),
    }
    test = "newcombe-inverted"
    if bounds is None:
        block = {"ci_low": None, "ci_high": None, **ci_reason("one_cluster")}
        return {**n_effective, **block, **_null_p(block, test)}

    def margin(alpha: float) -> float:
        low, high = interval(1.0 - alpha)
        return max(low, -high)

    # Newcombe's interval is the estimate less and plus a root of squares: it holds the estimate.
    p_value = inverted_p_value(margin, confidence=confidence, continuous=True)
    low, high = bounds
    return {**n_effective, "ci_low": low, "ci_high": high, "test": test, "p_value": p_value}


def _rate_change_rows(measure, success, counted, draws, *, confidence) -> tuple:
    side_a = draws.side(success, counted, False)
    side_b = draws.side(success, counted, True)
    rows = []
    for column, (attribute, value) in enumerate(draws.columns):
        rate_a, rate_b = side_a.rate(column), side_b.rate(column)
        row = {
            "measure": measure,
            "attribute": attribute,
            "value": value,
            "rate_baseline": rate_a,
            "rate_candidate": rate_b,
            "n_baseline": int(side_a.totals[column]),
            "n_candidate": int(side_b.totals[column]),
            "n_items_baseline": int(side_a.n_items[column]),
            "n_items_candidate": int(side_b.n_items[column]),
        }
        if rate_a is None or rate_b is None:
            reason = "a model has no observation of this value"
            rows.append(_undefined_change(row, reason, "no_observations"))
            continue
        row["difference"] = rate_b - rate_a
        if draws.paired:
            boot_a = None if side_a.boot is None else side_a.boot[:, column]
            boot_b = None if side_b.boot is None else side_b.boot[:, column]
            row.update(
                _paired_change(rate_a, rate_b, boot_a, boot_b, draws=draws, confidence=confidence)
            )
        else:
            row.update(_newcombe_change(side_a, side_b, column, confidence=confidence))
        rows.append(row)
    return rows, side_a, side_b


class _DeltaIntervals:
    """One model's Δ interval of one attribute at any confidence (``delta_interval``: the max-t
    band of its pairwise differences, with its design's degrees of freedom)."""

    def __init__(self, rates, boot, df: int):
        self.rates, self.boot, self.df = rates, boot, df

    def at(self, confidence: float) -> tuple[float, float, int]:
        return simultaneous_delta_interval(self.rates, self.boot, confidence=confidence, df=self.df)


def _delta_bounds_change(
    interval_a: _DeltaIntervals,
    interval_b: _DeltaIntervals,
    difference: float,
    *,
    draws: _Draws,
    confidence: float,
) -> dict:
    """Δ_B − Δ_A in [L_B − U_A, U_B − L_A], each model's Δ interval at 1 − α/2 (Bonferroni: both
    hold with probability ≥ 1 − α, whatever the true rates), and the test that inverts it."""

    def interval(level: float):
        half_alpha = (1.0 - level) / 2.0
        low_a, high_a, used_a = interval_a.at(1.0 - half_alpha)
        low_b, high_b, used_b = interval_b.at(1.0 - half_alpha)
        return low_b - high_a, high_b - low_a, min(used_a, used_b)

    block = interval_block(
        (lambda: interval(confidence)) if interval_a.boot is not None else None,
        n_resamples=draws.n_resamples,
        design_code=draws.design_code,
        estimate=difference,
    )
    test = "delta-intervals"
    if block["ci_low"] is None:
        return {**block, **_null_p(block, test)}

    def margin(alpha: float) -> float:
        low, high, _ = interval(1.0 - alpha)
        return max(low, -high)

    p_value = inverted_p_value(margin, confidence=confidence, continuous=False)
    return {**block, "test": test, "p_value": p_value}


def _delta_change_rows(measure, draws, side_a: _Side, side_b: _Side, *, confidence) -> list:
    rows = []
    for attribute in sorted({attribute for attribute, _ in draws.columns} - {NEUTRAL}):
        positions = [i for i, (a, _) in enumerate(draws.columns) if a == attribute]
        deltas, intervals = [], []
        for side, model in ((False, side_a), (True, side_b)):
            rates = {draws.columns[i][1]: model.rate(i) for i in positions}
            deltas.append(delta_summary(rates)["delta"])
            defined = [i for i in positions if model.rate(i) is not None]
            intervals.append(
                _DeltaIntervals(
                    [model.rate(i) for i in defined],
                    None if model.boot is None else model.boot[:, defined],
                    draws.df(side),
                )
            )
        row = {
            "measure": measure,
            "attribute": attribute,
            "delta_baseline": deltas[0],
            "delta_candidate": deltas[1],
        }
        if deltas[0] is None or deltas[1] is None:
            reason = "Δ is undefined for a model (fewer than two values with a defined rate)"
            rows.append(_undefined_change(row, reason, "undefined_in_every_resample"))
            continue
        row["difference"] = deltas[1] - deltas[0]
        row.update(
            _delta_bounds_change(*intervals, row["difference"], draws=draws, confidence=confidence)
        )
        rows.append(row)
    return rows


def _adjust(rows: list[dict]) -> None:
    defined = [row for row in rows if row["p_value"] is not None]
    p_values = [row["p_value"] for row in defined]
    for row in rows:
        row["p_holm"] = row["p_bh"] = None
    for row, holm, bh in zip(
        defined, holm_adjust(p_values), benjamini_hochberg_adjust(p_values), strict=True
    ):
        row["p_holm"], row["p_bh"] = float(holm), float(bh)


def version_change(
    frame_a: pd.DataFrame,
    frame_b: pd.DataFrame,
    *,
    confidence: float = 0.95,
    n_resamples: int = bootstrap.DEFAULT_N_RESAMPLES,
    seed: int = 0,
) -> dict:
    """B − A for every rate and Δ of one source, with intervals and tests (module docstring).

    ``frame_a`` / ``frame_b``: one source's rows (the study export's validated frame: item
    columns, ``hard_refusal``, ``cue``) of the baseline and the candidate.
    """
    design = prompt_overlap(frame_a, frame_b)
    if design["design"] is None:
        return {**design, "rates": [], "deltas": []}
    union = pd.concat([frame_a, frame_b], ignore_index=True)
    is_b = np.r_[np.zeros(len(frame_a), dtype=bool), np.ones(len(frame_b), dtype=bool)]
    paired = design["design"] == PAIRED
    draws = _Draws(union, is_b, paired=paired, n_resamples=n_resamples, seed=seed)
    rate_rows, delta_rows = [], []
    for measure, (success, counted) in measure_outcomes(union).items():
        rows, side_a, side_b = _rate_change_rows(
            measure, success, counted, draws, confidence=confidence
        )
        rate_rows += rows
        delta_rows += _delta_change_rows(measure, draws, side_a, side_b, confidence=confidence)
    _adjust(rate_rows + delta_rows)
    return {**design, "rates": rate_rows, "deltas": delta_rows}


# The keys of a rate block that the side-by-side view keeps: the rates, Δ and their intervals.
RATE_KEYS = ("n", "successes", "rate", "ci_low", "ci_high", "ci_reason", "ci_reason_code")
DELTA_KEYS = (
    "delta",
    "delta_reason",
    "delta_ci_low",
    "delta_ci_high",
    "delta_ci_reason",
    "delta_ci_reason_code",
    "max_value",
    "min_value",
)


def _compact(rates: dict) -> dict:
    """measure → attribute → {values: {value: rate cell}, Δ keys}: the export's rate blocks
    without the ratios and pairwise tests the comparison does not show."""
    return {
        measure: {
            attribute: {
                "values": {
                    value: {key: cell[key] for key in RATE_KEYS if key in cell}
                    for value, cell in block["values"].items()
                },
                **{key: block[key] for key in DELTA_KEYS if key in block},
            }
            for attribute, block in by_attribute.items()
        }
        for measure, by_attribute in rates.items()
    }


def models_side_by_side(
    frame: pd.DataFrame,
    *,
    model_column: str,
    baseline: str | None = None,
    candidate: str | None = None,
    confidence: float = 0.95,
    n_resamples: int = bootstrap.DEFAULT_N_RESAMPLES,
    seed: int = 0,
) -> dict:
    """One source's rates and Δ per model (``model_column``'s values), and the change from
    ``baseline`` to ``candidate`` (null with a reason when either has no rows)."""
    labels = frame[model_column].astype(str)
    models = sorted(labels.unique().tolist())
    per_model = {
        model: _compact(
            source_rates(
                frame[labels == model].reset_index(drop=True),
                confidence=confidence,
                n_resamples=n_resamples,
                seed=seed,
            )
        )
        for model in models
    }
    out = {"models": models, "per_model": per_model}
    missing = [model for model in (baseline, candidate) if model not in models]
    if baseline is None or candidate is None:
        return {**out, "change": None, "change_reason": "no two models were chosen to compare"}
    if missing:
        reason = f"no rows of {', '.join(missing)} in this source"
        return {**out, "change": None, "change_reason": reason}
    out["change"] = version_change(
        frame[labels == baseline].reset_index(drop=True),
        frame[labels == candidate].reset_index(drop=True),
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )
    return out


def comparison_by_source(
    sources: dict[str, pd.DataFrame],
    *,
    model_column: str,
    baseline: str,
    candidate: str,
    confidence: float = 0.95,
    n_resamples: int = bootstrap.DEFAULT_N_RESAMPLES,
    seed: int = 0,
) -> dict:
    """The "Models side by side" document section: per source (``human``, ``auto:<judge>``),
    every model's rates and Δ and the change from ``baseline`` to ``candidate``."""
    if baseline == candidate:
        raise ValueError("choose two different models to compare")
    section = {
        "model_column": model_column,
        "baseline": baseline,
        "candidate": candidate,
        "measures": list(MEASURES),
        "confidence": confidence,
        "n_resamples": n_resamples,
        "seed": seed,
        "sources": {
            source: models_side_by_side(
                frame,
                model_column=model_column,
                baseline=baseline,
                candidate=candidate,
                confidence=confidence,
                n_resamples=n_resamples,
                seed=seed,
            )
            for source, frame in sources.items()
            if len(frame)
        },
    }
    return to_plain(section)

"""Models side by side: each model's rates and Δ, and the change from one model to another
(docs/metrics.md, "Models side by side").

A "model" is whatever the caller names in ``model_column``: a generator within one study, or a
study (one version of a model) when several studies are compared. Each model's rates and Δ are
the study export's own (``study_rates.source_rates``: Wilson intervals, the one Δ interval).

The change from ``baseline`` (A) to ``candidate`` (B) is B − A for every rate and every Δ:

- **paired** when A and B hold the same prompts (prompt = base prompt × attribute × value):
  one cluster bootstrap over base prompts within domain, the same draw for both models, gives
  every interval; a rate's p-value is McNemar's exact test where each prompt has one outcome per
  model, else the centred bootstrap test; Δ's p-value is the centred bootstrap test;
- **independent** when the prompt sets overlap only in part: Newcombe's hybrid score interval
  and the two-proportion test of ``hypothesis_tests`` for rates, independent cluster bootstraps
  of each model for Δ;
- **undefined** (every change null with a reason) when they share no prompt.

Holm and Benjamini–Hochberg adjust every p-value of one source's comparison as one family.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import binom

from scoring.stats import bootstrap
from scoring.stats.disparity import NEUTRAL, ClusterResample, attribute_columns, delta_summary
from scoring.stats.hypothesis_tests import (
    benjamini_hochberg_adjust,
    holm_adjust,
    two_proportion_test,
)
from scoring.stats.proportions import wilson_bounds
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
    successes_a: int, n_a: int, successes_b: int, n_b: int, *, confidence: float = 0.95
) -> tuple[float, float]:
    """Newcombe's hybrid score interval for p_b − p_a of two independent proportions (Newcombe
    1998, Stat. Med. 17:873, method 10), from the two Wilson intervals."""
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
    discordant pairs (McNemar 1947; statsmodels ``mcnemar(exact=True)``); 1 with none."""
    outcomes_a = np.asarray(outcomes_a, dtype=bool)
    outcomes_b = np.asarray(outcomes_b, dtype=bool)
    only_a = int(np.sum(outcomes_a & ~outcomes_b))
    only_b = int(np.sum(~outcomes_a & outcomes_b))
    discordant = only_a + only_b
    if discordant == 0:
        return 1.0
    return float(min(1.0, 2.0 * binom.cdf(min(only_a, only_b), discordant, 0.5)))


def centred_bootstrap_p(samples, point: float) -> float | None:
    """Two-sided bootstrap p-value of "no change": the share of centred resamples at least as
    far from the estimate as the estimate is from 0, (1 + #{|d* − d| ≥ |d|}) / (1 + B)
    (Hall & Wilson 1991, guideline 1; Davison & Hinkley 1997, §4.4); None without resamples."""
    samples = np.asarray(samples, dtype=float)
    samples = samples[np.isfinite(samples)]
    if samples.size == 0:
        return None
    extreme = int(np.sum(np.abs(samples - point) >= abs(point) - 1e-12))
    return min(1.0, (1 + extreme) / (1 + samples.size))


def _bootstrap_interval(samples, *, confidence: float, design_code: str | None) -> dict:
    """``ci_low/ci_high`` of B − A from its resamples, or null with the reason it has none."""

    def bounds():
        low, high, _ = bootstrap.percentile_interval(np.asarray(samples), confidence=confidence)
        return low, high, None

    n_resamples = 0 if samples is None else len(samples)
    return interval_block(
        bounds if n_resamples else None, n_resamples=n_resamples, design_code=design_code
    )


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


class _Draws:
    """Per model, per-resample rates of every (attribute, value) column, from one paired draw or
    two independent ones."""

    def __init__(self, union: pd.DataFrame, is_b, *, paired: bool, n_resamples: int, seed: int):
        self.is_b = np.asarray(is_b, dtype=bool)
        self.column_codes, self.columns = attribute_columns(union)
        rng = np.random.default_rng(seed)
        if paired:
            shared = ClusterResample(union, n_resamples=n_resamples, rng=rng)
            self.resamples = {False: shared, True: shared}
        else:
            self.resamples = {
                side: ClusterResample(
                    union[self.is_b == side].reset_index(drop=True),
                    n_resamples=n_resamples,
                    rng=rng,
                )
                for side in (False, True)
            }
        codes = {
            resample.design_code for resample in self.resamples.values() if resample.design_code
        }
        self.design_code = min(codes) if codes else None
        self.n_resamples = n_resamples
        self.paired = paired

    def rates(self, success, counted, side: bool):
        """Point (successes, totals) per column, and the (B, columns) resampled rates or None."""
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
        point = (sums[0].sum(axis=0), sums[1].sum(axis=0))
        boot = None
        if self.n_resamples > 0:
            boot = bootstrap.resampled_rates(resample.counts, sums[0], sums[1])
        return point, boot


def _rate(successes, totals) -> float | None:
    return float(successes / totals) if totals > 0 else None


class _PromptOutcomes:
    """Per (column, base prompt, model): how many counted outcomes and how many successes, to
    find the columns where McNemar's design holds (one outcome per prompt and model)."""

    def __init__(self, union: pd.DataFrame, success, counted, draws: _Draws):
        prompt_codes, prompts = pd.factorize(union["base_prompt_id"])
        shape = (len(draws.columns), len(prompts), 2)
        keys = np.ravel_multi_index(
            (draws.column_codes, prompt_codes, draws.is_b.astype(np.int64)), shape
        )
        size = int(np.prod(shape))
        self.counts = np.bincount(keys[counted], minlength=size).reshape(shape)
        self.successes = np.bincount(keys[counted & success], minlength=size).reshape(shape)

    def single(self, column: int) -> tuple | None:
        """A's and B's outcome per prompt of ``column``, when each model has exactly one
        counted outcome on every prompt either has; else None."""
        counts = self.counts[column]
        present = counts.sum(axis=1) > 0
        if not present.any() or (counts[present] != 1).any():
            return None
        outcomes = self.successes[column][present].astype(bool)
        return outcomes[:, 0], outcomes[:, 1]


def _rate_change_rows(measure, union, success, counted, draws, *, paired, confidence) -> tuple:
    (successes_a, totals_a), boot_a = draws.rates(success, counted, False)
    (successes_b, totals_b), boot_b = draws.rates(success, counted, True)
    prompt_outcomes = _PromptOutcomes(union, success, counted, draws) if paired else None
    rows = []
    for column, (attribute, value) in enumerate(draws.columns):
        rate_a = _rate(successes_a[column], totals_a[column])
        rate_b = _rate(successes_b[column], totals_b[column])
        row = {
            "measure": measure,
            "attribute": attribute,
            "value": value,
            "rate_baseline": rate_a,
            "rate_candidate": rate_b,
            "n_baseline": int(totals_a[column]),
            "n_candidate": int(totals_b[column]),
        }
        if rate_a is None or rate_b is None:
            reason = "a model has no observation of this value"
            rows.append(_undefined_change(row, reason, "no_observations"))
            continue
        row["difference"] = rate_b - rate_a
        if paired:
            samples = None if boot_a is None else boot_b[:, column] - boot_a[:, column]
            row.update(
                _bootstrap_interval(samples, confidence=confidence, design_code=draws.design_code)
            )
            single = prompt_outcomes.single(column)
            if single is not None:
                row.update(test="mcnemar-exact", p_value=mcnemar_exact_p(*single))
            else:
                row.update(_bootstrap_test(samples, row["difference"], draws.design_code))
        else:
            low, high = newcombe_interval(
                int(successes_a[column]),
                int(totals_a[column]),
                int(successes_b[column]),
                int(totals_b[column]),
                confidence=confidence,
            )
            row.update(ci_low=low, ci_high=high)
            test = two_proportion_test(
                int(successes_a[column]),
                int(totals_a[column]),
                int(successes_b[column]),
                int(totals_b[column]),
            )
            row.update(test=test.extra.get("test"), p_value=test.value)
        rows.append(row)
    return rows, (successes_a, totals_a, boot_a), (successes_b, totals_b, boot_b)


def _bootstrap_test(samples, point: float, design_code: str | None) -> dict:
    test = "cluster-bootstrap"
    if design_code is not None or samples is None:
        code = design_code or "no_resamples"
        return {"test": test, "p_value": None, "p_value_reason": ci_reason(code)["ci_reason"]}
    p_value = centred_bootstrap_p(samples, point)
    if p_value is None:
        reason = ci_reason("undefined_in_every_resample")["ci_reason"]
        return {"test": test, "p_value": None, "p_value_reason": reason}
    return {"test": test, "p_value": p_value}


def _delta_change_rows(measure, draws, side_a, side_b, *, confidence) -> list:
    rows = []
    for attribute in sorted({attribute for attribute, _ in draws.columns} - {NEUTRAL}):
        positions = [i for i, (a, _) in enumerate(draws.columns) if a == attribute]
        deltas, boots = [], []
        for successes, totals, boot in (side_a, side_b):
            rates = {draws.columns[i][1]: _rate(successes[i], totals[i]) for i in positions}
            deltas.append(delta_summary(rates)["delta"])
            boots.append(None if boot is None else bootstrap.delta_of_rates(boot[:, positions]))
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
        samples = None if boots[0] is None else boots[1] - boots[0]
        row.update(
            _bootstrap_interval(samples, confidence=confidence, design_code=draws.design_code)
        )
        row.update(_bootstrap_test(samples, row["difference"], draws.design_code))
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
            measure, union, success, counted, draws, paired=paired, confidence=confidence
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

"""Rates per attribute value, their disparity Δ, ratios, and its uncertainty.

Definitions: docs/metrics.md, "Disparity". Every rate carries a Wilson interval; Δ carries the
simultaneous-pairwise interval of ``delta_interval`` ("Δ interval"); max/min and the ratios to
the neutral baseline and to a reference value carry cluster-bootstrap percentile intervals (base
prompts resampled within domain); Δ has a within-base-prompt permutation test.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from annotations.labels import NEUTRAL
from scoring.stats import bootstrap
from scoring.stats.delta_interval import delta_interval_block, ratio_interval_block
from scoring.stats.proportions import effective_sample_size, wilson_bounds
from scoring.stats.result import (
    MIN_BOOTSTRAP_UNITS,
    MIN_DISTINCT_RESAMPLES,
    ci_reason,
    finite_or_none,
    interval_block,
)


def rate_table(frame: pd.DataFrame, *, outcome: str, by: list[str], confidence: float = 0.95):
    """n, successes, rate, ci_low, ci_high per group of ``by``; rows whose outcome is NA are not counted."""
    counted = frame[frame[outcome].notna()]
    grouped = counted.groupby(by, sort=True, observed=True)[outcome]
    table = grouped.agg(n="size", successes=lambda s: int(s.astype(bool).sum())).reset_index()
    table["rate"] = table["successes"] / table["n"]
    table["ci_low"], table["ci_high"] = wilson_bounds(
        table["successes"], table["n"], confidence=confidence
    )
    return table


def delta_summary(rates: Mapping[str, float | None]) -> dict:
    """Δ = max − min over the defined rates, the values at max and min, and ratio = max / min."""
    defined = {value: rate for value, rate in rates.items() if rate is not None}
    if len(defined) < 2:
        reason = "fewer than two attribute values with a defined rate"
        return {
            "delta": None,
            "delta_reason": reason,
            "max_value": None,
            "min_value": None,
            "ratio": None,
            "ratio_reason": reason,
        }
    # Ties resolve to the alphabetically first value, so the result never depends on input order.
    ordered = sorted(defined.items())
    max_value, max_rate = max(ordered, key=lambda item: item[1])
    min_value, min_rate = min(ordered, key=lambda item: item[1])
    summary = {"delta": max_rate - min_rate, "max_value": max_value, "min_value": min_value}
    if min_rate == 0:
        summary.update(ratio=None, ratio_reason="the minimum rate is 0")
    else:
        summary["ratio"] = max_rate / min_rate
    return summary


def _interval(
    samples,
    prefix: str,
    *,
    confidence: float,
    n_resamples: int,
    design_code: str | None = None,
    estimate: float | None = None,
) -> dict:
    """The percentile interval of ``samples`` as ``<prefix>_ci_low/high``, or null with a
    reason (``result.interval_block``)."""

    def bounds():
        values = np.asarray(samples, dtype=float)
        low, high, n_undefined = bootstrap.percentile_interval(values, confidence=confidence)
        return low, high, values.size - int(n_undefined)

    return interval_block(
        bounds,
        n_resamples=n_resamples,
        design_code=design_code,
        prefix=f"{prefix}_",
        estimate=estimate,
    )


def _ratio_to(rate, base_rate, base_name: str) -> dict:
    if rate is None or base_rate is None:
        return {"ratio": None, "reason": "a rate in the ratio is undefined"}
    if base_rate == 0:
        return {"ratio": None, "reason": f"the {base_name} rate is 0"}
    return {"ratio": rate / base_rate}


def value_entry(
    successes: float,
    n: float,
    *,
    confidence: float,
    bounds=None,
    n_items: int | None = None,
    n_effective: float | None = None,
) -> dict:
    """The per-value record: n (labels counted), successes, rate and its interval (null with a
    reason when n = 0).

    ``bounds`` passes an interval already computed for many values at once (the design-effect
    Wilson interval of ``disparity_report``); ``n_items`` and ``n_effective`` are recorded
    beside ``n`` when given (docs/metrics.md, "Rates and Wilson intervals").
    """
    n, successes = int(n), int(successes)
    counts = {} if n_items is None else {"n_items": int(n_items), "n_labels": n}
    if n_effective is not None:
        counts["n_effective"] = float(n_effective)
    if n == 0:
        return {
            "n": 0,
            **counts,
            "successes": 0,
            "rate": None,
            "ci_low": None,
            "ci_high": None,
            "reason": "no observations (n = 0)",
            **ci_reason("no_observations"),
        }
    low, high = bounds if bounds is not None else wilson_bounds(successes, n, confidence=confidence)
    entry = {
        "n": n,
        **counts,
        "successes": successes,
        "rate": successes / n,
        "ci_low": finite_or_none(low),
        "ci_high": finite_or_none(high),
    }
    if entry["ci_low"] is None:
        entry.update(ci_reason("one_cluster"))
    return entry


class ClusterResample:
    """One set of stratified cluster-bootstrap draws over a frame's rows, reusable across measures."""

    def __init__(
        self,
        frame: pd.DataFrame,
        *,
        n_resamples: int,
        rng: np.random.Generator,
        cluster: str = "base_prompt_id",
        stratum: str = "domain",
    ):
        self.cluster_codes, stratum_of_cluster = bootstrap.cluster_strata(
            frame[cluster], frame[stratum]
        )
        self.n_clusters = len(stratum_of_cluster)
        self.n_resamples = int(n_resamples)
        self.indices = bootstrap.stratified_cluster_indices(
            stratum_of_cluster, n_resamples=self.n_resamples, rng=rng
        )
        # Bootstrap weights per (resample, cluster), used by every resampled statistic.
        self.counts = bootstrap.cluster_weights(self.indices, stratum_of_cluster)
        self.design_code = _design_code(stratum_of_cluster)
        self.df = design_degrees_of_freedom(stratum_of_cluster)
        self.stratum_of_cluster = stratum_of_cluster


def design_degrees_of_freedom(stratum_of_cluster) -> int:
    """Clusters in strata of two or more, less those strata: the degrees of freedom of a
    stratified cluster design's variance (strata of one cluster contribute none)."""
    sizes = np.bincount(np.asarray(stratum_of_cluster, dtype=np.int64))
    varying = sizes[sizes >= 2]
    return int(varying.sum() - varying.size)


def satterthwaite_df(cluster_successes, cluster_totals, stratum_of_cluster) -> np.ndarray | None:
    """The effective degrees of freedom of the variance of each pairwise difference of the
    columns' rates, in ``np.triu_indices`` order, NaN where the pair does not vary
    (docs/metrics.md, "Δ interval").

    Per pair, each cluster's linearised residual e_c = (s_ci − r_i t_ci)/T_i − (s_cj − r_j t_cj)/T_j
    gives a variance per stratum h of m_h clusters, v_h = m_h/(m_h − 1) Σ_c (e_c − ē_h)², and
    Satterthwaite's (1946) df = (Σ_h v_h)² / Σ_h v_h² / (m_h − 1). With a few base prompts per
    domain the variance often rests on a handful of domains (binary outcomes leave many with
    v_h = 0), and the df is then far below clusters − strata. None with fewer than two columns.
    """
    successes = np.asarray(cluster_successes, dtype=float)
    totals = np.asarray(cluster_totals, dtype=float)
    if successes.shape[1] < 2:
        return None
    column_totals = totals.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        rates = successes.sum(axis=0) / column_totals
        residuals = (successes - rates * totals) / column_totals
    first, second = np.triu_indices(successes.shape[1], k=1)
    pairs = np.nan_to_num(residuals[:, first] - residuals[:, second])
    strata = np.asarray(stratum_of_cluster, dtype=np.int64)
    sizes = np.bincount(strata)
    n_strata = sizes.size
    sums = np.zeros((n_strata, pairs.shape[1]))
    np.add.at(sums, strata, pairs)
    squares = np.zeros_like(sums)
    np.add.at(squares, strata, pairs**2)
    varying = sizes >= 2
    with np.errstate(divide="ignore", invalid="ignore"):
        within = squares - sums**2 / np.maximum(sizes, 1)[:, None]
        per_stratum = np.where(varying[:, None], sizes[:, None] / (sizes[:, None] - 1) * within, 0)
        total = per_stratum.sum(axis=0)
        denominator = np.where(
            varying[:, None], per_stratum**2 / np.maximum(sizes - 1, 1)[:, None], 0
        ).sum(axis=0)
        df = total**2 / denominator
    return np.where((total > 1e-15) & np.isfinite(df), df, np.nan)


def _design_code(stratum_of_cluster: np.ndarray) -> str | None:
    """Why no interval can come from this design, or None: a stratum with one cluster always
    redraws that cluster, so only clusters in strata with two or more vary."""
    sizes = np.bincount(np.asarray(stratum_of_cluster, dtype=np.int64))
    varying = int(sizes[sizes >= 2].sum())
    if sizes.size and varying == 0:
        return "one_cluster_per_stratum"
    if varying < MIN_BOOTSTRAP_UNITS:
        return "too_few_clusters"
    # Rao–Wu draws m − 1 of a domain's m base prompts: C(2m − 2, m − 1) distinct draws per
    # domain (2 for m = 2). Three domains of two give 8 distinct resamples, too few for a band
    # (its Δ covered 0.88 in "Calibration").
    distinct = sum(math.log(math.comb(2 * m - 2, m - 1)) for m in sizes[sizes >= 2])
    if distinct < math.log(MIN_DISTINCT_RESAMPLES):
        return "too_few_resamples"
    return None


def attribute_columns(
    frame: pd.DataFrame,
    *,
    attribute_column: str = "attribute",
    value_column: str = "attribute_value",
):
    """Per-row code of its (attribute, value) pair, and the sorted pairs (as strings)."""
    attribute_codes, attributes = pd.factorize(frame[attribute_column], sort=True)
    value_codes, values = pd.factorize(frame[value_column], sort=True)
    attributes, values = [str(a) for a in attributes], [str(v) for v in values]
    pair_codes, inverse = np.unique(
        attribute_codes * len(values) + value_codes, return_inverse=True
    )
    columns = [(attributes[c // len(values)], values[c % len(values)]) for c in pair_codes]
    return inverse.astype(np.int64), columns


def disparity_report(
    frame: pd.DataFrame,
    success,
    counted,
    *,
    resample: ClusterResample | None = None,
    confidence: float = 0.95,
    reference: Mapping[str, str] | None = None,
    attribute_column: str = "attribute",
    value_column: str = "attribute_value",
    columns: tuple | None = None,
    units: DesignUnits | None = None,
) -> dict:
    """Per attribute: per-value rates, Δ, max/min ratio, ratios to neutral and reference, with CIs.

    ``success`` and ``counted`` are per-row booleans: a row enters a rate's n when counted, its
    numerator when also a success. ``resample`` (built on the same frame) supplies the bootstrap;
    ``columns`` may pass ``attribute_columns(frame)`` and ``units`` ``DesignUnits(frame)`` when
    several measures share one frame.
    """
    success = np.asarray(success, dtype=bool)
    counted = np.asarray(counted, dtype=bool)
    if len(frame) == 0:
        return {}
    if columns is None:
        columns = attribute_columns(
            frame, attribute_column=attribute_column, value_column=value_column
        )
    column_codes, columns = columns
    units = units if units is not None else DesignUnits(frame)
    cluster_codes, n_clusters = units.cluster_codes, units.n_clusters
    sums = {
        name: bootstrap.cluster_sums(
            cluster_codes, column_codes, weights, n_clusters=n_clusters, n_columns=len(columns)
        )
        for name, weights in (("successes", success & counted), ("totals", counted))
    }
    point_successes, point_totals = sums["successes"].sum(axis=0), sums["totals"].sum(axis=0)
    # Labels of one item (and items of one base prompt) are not independent: each rate's
    # interval uses the effective sample size of its cluster-robust variance.
    n_effective = effective_sample_size(sums["successes"], sums["totals"], confidence=confidence)
    n_items = units.items_per_column(counted, column_codes, len(columns))
    boot_rates = None
    if resample is not None and resample.n_resamples > 0:
        boot_rates = bootstrap.resampled_rates(resample.counts, sums["successes"], sums["totals"])
    neutral_column = columns.index((NEUTRAL, NEUTRAL)) if (NEUTRAL, NEUTRAL) in columns else None
    report = {}
    context = _Context(
        successes=point_successes,
        totals=point_totals,
        n_effective=n_effective,
        n_items=n_items,
        boot_rates=boot_rates,
        neutral_column=neutral_column,
        confidence=confidence,
        n_resamples=0 if resample is None else resample.n_resamples,
        design_code=None if resample is None else resample.design_code,
        design_df=None if resample is None else resample.df,
        cluster_successes=sums["successes"],
        cluster_totals=sums["totals"],
        stratum_of_cluster=None if resample is None else resample.stratum_of_cluster,
    )
    for attribute in sorted({attribute for attribute, _ in columns}):
        positions = [i for i, (a, _) in enumerate(columns) if a == attribute]
        report[attribute] = _attribute_block(
            attribute,
            {columns[i][1]: i for i in positions},
            context,
            reference=(reference or {}).get(attribute),
        )
    return report


class DesignUnits:
    """A frame's units of analysis, coded once: its clusters (base prompt within domain, as
    ``ClusterResample`` draws them) and its items (every row its own item without ``item_id``)."""

    def __init__(self, frame: pd.DataFrame):
        self.cluster_codes, stratum_of_cluster = bootstrap.cluster_strata(
            frame["base_prompt_id"], frame["domain"]
        )
        self.n_clusters = len(stratum_of_cluster)
        self.n_rows = len(frame)
        self.item_codes = (
            pd.factorize(frame["item_id"])[0]
            if "item_id" in frame.columns
            else np.arange(len(frame))
        )

    def items_per_column(self, counted, column_codes, n_columns) -> np.ndarray:
        """Distinct items among each column's counted rows."""
        size = self.n_rows + 1
        pairs = np.unique(column_codes[counted].astype(np.int64) * size + self.item_codes[counted])
        return np.bincount(pairs // size, minlength=n_columns)


@dataclass
class _Context:
    """What every attribute block of one measure reads: per-column sums, effective sizes and
    item counts, the bootstrap's rates and the design."""

    successes: np.ndarray
    totals: np.ndarray
    n_effective: np.ndarray
    n_items: np.ndarray
    boot_rates: np.ndarray | None
    neutral_column: int | None
    confidence: float
    n_resamples: int
    design_code: str | None
    design_df: int | None
    cluster_successes: np.ndarray
    cluster_totals: np.ndarray
    stratum_of_cluster: np.ndarray | None

    def __post_init__(self):
        with np.errstate(divide="ignore", invalid="ignore"):
            rates = np.where(
                self.totals > 0, self.successes / np.where(self.totals > 0, self.totals, 1), np.nan
            )
        self.wilson_low, self.wilson_high = wilson_bounds(
            rates * self.n_effective, self.n_effective, confidence=self.confidence
        )

    def df_of(self, columns) -> float | None:
        """The band's degrees of freedom for these columns: the smallest Satterthwaite df of
        any pair, at most the design's (clusters − strata). One df for every pair, not one
        each: per-pair df covered 0.93 at 30 items over nine domains, the smallest 0.96–0.97
        ("Calibration")."""
        if self.design_df is None or self.stratum_of_cluster is None:
            return self.design_df
        effective = satterthwaite_df(
            self.cluster_successes[:, columns],
            self.cluster_totals[:, columns],
            self.stratum_of_cluster,
        )
        if effective is None or np.isnan(effective).all():
            return self.design_df
        return float(np.clip(np.nanmin(effective), 1.0, max(float(self.design_df), 1.0)))

    def rate(self, column):
        if column is None or self.totals[column] == 0:
            return None
        return float(self.successes[column] / self.totals[column])

    def interval(self, samples, prefix, estimate=None):
        if self.boot_rates is None:
            return _interval(np.array([]), prefix, confidence=self.confidence, n_resamples=0)
        return _interval(
            samples,
            prefix,
            confidence=self.confidence,
            n_resamples=self.n_resamples,
            design_code=self.design_code,
            estimate=estimate,
        )

    def boot(self, column):
        return self.boot_rates[:, column] if self.boot_rates is not None else None


def _ratio_entry(context: _Context, column: int, base_column: int | None, base_name: str, key: str):
    ratio = _ratio_to(context.rate(column), context.rate(base_column), base_name)
    entry = {key: ratio["ratio"]}
    if "reason" in ratio:
        entry[f"{key}_reason"] = ratio["reason"]
    samples = None
    if context.boot_rates is not None and base_column is not None:
        with np.errstate(divide="ignore", invalid="ignore"):
            samples = context.boot(column) / context.boot(base_column)
    entry.update(
        context.interval(
            samples if samples is not None else np.array([]), key, estimate=ratio["ratio"]
        )
    )
    return entry


def _attribute_block(attribute: str, value_columns: dict, context: _Context, *, reference=None):
    values = {}
    reference_column = value_columns.get(reference) if reference is not None else None
    for value, column in value_columns.items():
        entry = value_entry(
            context.successes[column],
            context.totals[column],
            confidence=context.confidence,
            bounds=(context.wilson_low[column], context.wilson_high[column]),
            n_items=context.n_items[column],
            n_effective=context.n_effective[column],
        )
        if attribute != NEUTRAL:
            entry.update(
                _ratio_entry(context, column, context.neutral_column, "neutral", "ratio_to_neutral")
            )
            if reference is not None:
                entry.update(
                    _ratio_entry(
                        context, column, reference_column, "reference", "ratio_to_reference"
                    )
                )
        values[value] = entry
    block = {
        "values": values,
        "n": int(sum(context.totals[c] for c in value_columns.values())),
        "n_items": int(sum(context.n_items[c] for c in value_columns.values())),
        "n_values": len(values),
    }
    if reference is not None:
        block["reference_value"] = reference
    if attribute == NEUTRAL:
        reason = "the neutral baseline is excluded from Δ"
        block.update(
            delta=None,
            delta_reason=reason,
            max_value=None,
            min_value=None,
            ratio=None,
            ratio_reason=reason,
        )
        return block
    block.update(
        delta_summary({value: context.rate(column) for value, column in value_columns.items()})
    )
    defined = [column for column in value_columns.values() if context.rate(column) is not None]
    boot = None if context.boot_rates is None else context.boot_rates[:, defined]
    rates = [context.rate(column) for column in defined]
    design = {
        "confidence": context.confidence,
        "n_resamples": context.n_resamples,
        "design_code": context.design_code,
        "df": context.df_of(defined),
    }
    # Δ, its test and the max/min ratio come from one band of simultaneous pairwise intervals.
    block.update(delta_interval_block(rates, boot, **design))
    block.update(ratio_interval_block(rates, boot, **design))
    return block

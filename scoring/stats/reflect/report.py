"""REFLECT report: every decision-task statistic of one or more models, JSON-ready.

Definitions: docs/metrics.md, "REFLECT". The report's key paths (documented there,
``report.json``): ``2afc.<scenario>.{attempted, kept, discarded_invalid,
discarded_inconsistent, pol, ext, first_position_rate, win_rate.{race,gender,race_gender}}``
and ``mcq.<question>.{valid, jsd.{race,gender}, mean_gap.{race,gender}}``. A CI sits beside
its statistic as ``<name>_ci = [low, high]`` (``win_rate_ci.race.<race>`` for nested ones);
leave-one-template-out results under ``loto``. Values are plain floats, ints or None.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from scoring.stats.bootstrap import DEFAULT_N_RESAMPLES
from scoring.stats.reflect.blocks import (
    mcq_question_report,
    plain,
    salary_report,
    two_afc_scenario_report,
)
from scoring.stats.reflect.parsing import mcq_records, salary_records, two_afc_records
from scoring.stats.reflect.robustness import as_generator
from scoring.stats.reflect.two_afc import (
    discard_counts,
    discard_rate,
    two_afc_counts,
    win_matrix_spearman_table,
)
from scoring.stats.reflect.variants import (
    mcq_source_gender_split,
    mcq_variant_comparison,
    two_afc_source_gender_split,
    two_afc_variant_agreement,
)

__all__ = [
    "cross_model_spearman",
    "mcq_question_report",
    "plain",
    "reflect_model_report",
    "reflect_report",
    "salary_report",
    "two_afc_discard_table",
    "two_afc_scenario_report",
]


def _original_only(frame: pd.DataFrame) -> pd.DataFrame:
    if "variant" in frame.columns:
        return frame[frame["variant"].fillna("original") == "original"]
    return frame


def reflect_model_report(
    two_afc: pd.DataFrame | None = None,
    mcq: pd.DataFrame | None = None,
    salary: pd.DataFrame | None = None,
    *,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    rng: np.random.Generator | int = 0,
    confidence: float = 0.95,
    encodings: Mapping[str, Mapping[str, float]] | None = None,
    source_gender: Mapping[tuple[str, str], str] | None = None,
) -> dict:
    """The report dict of ONE model from its raw answer frames (report.json's keys, above).

    Frames follow docs/metrics.md "REFLECT: records". The statistics use the ``original``
    variant (all rows when there is no ``variant`` column); every other variant is compared
    with it under ``variants.<variant>``. ``source_gender`` ((occupation, template) → gender
    of the source photo) adds ``source_gender_split`` to each scenario and question.
    ``n_resamples = 0`` skips the bootstrap.
    """
    for frame in (two_afc, mcq, salary):
        if frame is not None and frame["model"].nunique() > 1:
            raise ValueError("reflect_model_report takes one model's frames; use reflect_report")
    options = {
        "n_resamples": n_resamples,
        "rng": as_generator(rng),
        "confidence": confidence,
        "encodings": encodings or {},
        "source_gender": source_gender,
    }
    report: dict = {
        "bootstrap": {
            "n_resamples": int(n_resamples),
            "confidence": confidence,
            "method": (
                "templates resampled within occupation (Rao-Wu rescaled); intervals per "
                "docs/metrics.md, 'REFLECT: intervals'"
            ),
            "seed": rng if isinstance(rng, int) else None,
        }
    }
    # These matrix products are small: multi-threaded BLAS only adds contention (3-4x slower
    # wall time on a busy 2-core machine), so run them on one thread.
    with threadpool_limits(limits=1, user_api="blas"):
        if two_afc is not None and len(two_afc):
            report["2afc"] = _two_afc_blocks(two_afc_records(two_afc), **options)
        if mcq is not None and len(mcq):
            report["mcq"] = _mcq_blocks(mcq_records(mcq), **options)
        if salary is not None and len(salary):
            records = salary_records(_original_only(salary))
            report["salary"] = salary_report(
                records, n_resamples=n_resamples, rng=options["rng"], confidence=confidence
            )
        variants = _variant_blocks(two_afc, mcq, **options)
        if variants:
            report["variants"] = variants
    return report


def _two_afc_blocks(records, *, n_resamples, rng, confidence, source_gender, **_) -> dict:
    out = {}
    for scenario, group in _original_only(records).groupby("scenario", sort=True):
        block = two_afc_scenario_report(
            group, n_resamples=n_resamples, rng=rng, confidence=confidence
        )
        if source_gender is not None:
            block["source_gender_split"] = two_afc_source_gender_split(group, source_gender)
        out[str(scenario)] = block
    return out


def _mcq_blocks(records, *, n_resamples, rng, confidence, encodings, source_gender) -> dict:
    out = {}
    for question, group in _original_only(records).groupby("question", sort=True):
        encoding = encodings.get(str(question))
        block = mcq_question_report(
            group, encoding=encoding, n_resamples=n_resamples, rng=rng, confidence=confidence
        )
        if source_gender is not None:
            block["source_gender_split"] = mcq_source_gender_split(
                group, source_gender, encoding=encoding
            )
        out[str(question)] = block
    return out


def _variant_names(frame: pd.DataFrame | None) -> list[str]:
    if frame is None or "variant" not in frame.columns:
        return []
    return sorted({str(v) for v in frame["variant"].dropna().unique()} - {"original"})


def _variant_blocks(two_afc, mcq, *, n_resamples, rng, confidence, encodings, **_) -> dict:
    out: dict = {}
    for variant in _variant_names(two_afc):
        records = two_afc_records(two_afc[two_afc["variant"].isin(["original", variant])])
        out.setdefault(variant, {})["2afc"] = {
            str(scenario): two_afc_variant_agreement(group, variant=variant, confidence=confidence)
            for scenario, group in records.groupby("scenario", sort=True)
        }
    for variant in _variant_names(mcq):
        records = mcq_records(mcq[mcq["variant"].isin(["original", variant])])
        out.setdefault(variant, {})["mcq"] = {
            str(question): mcq_variant_comparison(
                group,
                variant=variant,
                encoding=encodings.get(str(question)),
                n_resamples=n_resamples,
                rng=rng,
                confidence=confidence,
            )
            for question, group in records.groupby("question", sort=True)
        }
    return out


def reflect_report(
    two_afc: pd.DataFrame | None = None,
    mcq: pd.DataFrame | None = None,
    salary: pd.DataFrame | None = None,
    *,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    rng: np.random.Generator | int = 0,
    confidence: float = 0.95,
    **options,
) -> dict:
    """Every model's report and the cross-model Spearman table.

    ``{"models": {model: reflect_model_report(...)}, "spearman": {scenario: {"a|b": ...}}}``;
    ``options`` go to reflect_model_report (``encodings``, ``source_gender``).
    """
    frames = [f for f in (two_afc, mcq, salary) if f is not None]
    models = sorted({str(m) for f in frames for m in f["model"].unique()})
    generator = as_generator(rng)

    def of(frame, model):
        return None if frame is None else frame[frame["model"].astype(str) == model]

    common = {"n_resamples": n_resamples, "confidence": confidence, **options}
    report: dict = {
        "models": {
            model: reflect_model_report(
                of(two_afc, model), of(mcq, model), of(salary, model), rng=generator, **common
            )
            for model in models
        }
    }
    for block in report["models"].values():
        block["bootstrap"]["seed"] = rng if isinstance(rng, int) else None
    report["spearman"] = (
        cross_model_spearman(two_afc, n_resamples=n_resamples, rng=generator, confidence=confidence)
        if two_afc is not None and len(two_afc)
        else {}
    )
    return report


def cross_model_spearman(
    two_afc: pd.DataFrame,
    *,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    rng: np.random.Generator | int,
    confidence: float = 0.95,
) -> dict:
    """Spearman's rho over the 45 win-matrix cells for every pair of models, per scenario, with
    a paired template-cluster bootstrap CI (docs: "REFLECT: 2AFC", cross-model agreement)."""
    records = two_afc_records(_original_only(two_afc))
    generator = as_generator(rng)
    out: dict = {}
    with threadpool_limits(limits=1, user_api="blas"):
        for scenario, group in records.groupby("scenario", sort=True):
            counts = {
                str(model): two_afc_counts(part)
                for model, part in group.groupby("model", sort=True)
            }
            table = win_matrix_spearman_table(
                counts, n_resamples=n_resamples, rng=generator, confidence=confidence
            )
            out[str(scenario)] = {pair: stat.to_dict() for pair, stat in table.items()}
    return out


def two_afc_discard_table(two_afc: pd.DataFrame) -> dict:
    """Attempted, kept and discarded comparisons by reason per scenario and over all scenarios.

    Also the discard rate (1 - kept / attempted) and the refusal share of discards (the
    published table of REFLECT's Appendix: Income 1,871 kept of 2,160, discard 0.1338).
    """
    records = two_afc_records(_original_only(two_afc))
    table = {}
    for scenario, group in records.groupby("scenario", sort=True):
        per_model = [discard_counts(two_afc_counts(g)) for _, g in group.groupby("model")]
        table[str(scenario)] = {k: sum(row[k] for row in per_model) for k in per_model[0]}
    if table:
        table["all"] = {
            k: sum(row[k] for row in table.values()) for k in next(iter(table.values()))
        }
    for row in table.values():
        row["discard_rate"] = discard_rate(row["kept"], row["attempted"]).value
        discarded = row["attempted"] - row["kept"]
        row["refusal_share_of_discards"] = (
            row["discarded_refusal"] / discarded if discarded else None
        )
    return table

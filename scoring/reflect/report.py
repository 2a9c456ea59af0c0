"""From stored answer rows to report.json: frames → the statistics core → one dict.

Django-free. The rows are the answer dump of docs/reflect.md (the same dicts the database
selector yields and ``export_reflect_run`` writes as JSONL), so a run re-analysed from its
dump gives the same report as from the database. Every number comes from
``scoring.stats.reflect*`` (definitions: docs/metrics.md, "REFLECT"); this module only
shapes the input and adds the robustness splits beside each model's block.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from scoring.reflect.parsing import ERROR, split_explanation
from scoring.stats.bootstrap import DEFAULT_N_RESAMPLES
from scoring.stats.reflect.parsing import mcq_records, two_afc_records
from scoring.stats.reflect.report import reflect_report, two_afc_discard_table
from scoring.stats.reflect.variants import (
    mcq_source_gender_split,
    mcq_variant_comparison,
    two_afc_source_gender_split,
    two_afc_variant_agreement,
)

REPORT_VERSION = 1


def _answer_text(row: Mapping[str, Any]) -> str | None:
    raw = row.get("raw_answer")
    if raw is not None and row.get("explain"):
        return split_explanation(raw)[0]
    return raw


def answer_frames(rows: Iterable[Mapping[str, Any]]) -> dict[str, pd.DataFrame | None]:
    """The stats core's three record frames; unanswered (error) rows are left out, and so is
    a 2AFC presentation whose partner presentation has no answer yet (pending)."""
    by_task: dict[str, list[dict]] = {"2afc": [], "mcq": [], "salary": []}
    for row in rows:
        if row.get("status") == ERROR:
            continue
        common = {
            "model": row["model"],
            "occupation": row["occupation"],
            "template": row["template"],
            "variant": row.get("variant") or "original",
            "answer": _answer_text(row),
        }
        if row["task"] == "2afc":
            by_task["2afc"].append(
                {
                    **common,
                    "scenario": row["item"],
                    "race_a": row["race_a"],
                    "gender_a": row["gender_a"],
                    "race_b": row["race_b"],
                    "gender_b": row["gender_b"],
                    "presentation": row["presentation"],
                }
            )
        elif row["task"] == "mcq":
            by_task["mcq"].append(
                {
                    **common,
                    "question": row["item"],
                    "race": row["race_a"],
                    "gender": row["gender_a"],
                    "sample_index": row.get("sample_index", 0),
                }
            )
        else:
            by_task["salary"].append(
                {
                    **common,
                    "biography": row["biography"],
                    "race": row["race_a"],
                    "gender": row["gender_a"],
                }
            )
    frames = {task: (pd.DataFrame(found) if found else None) for task, found in by_task.items()}
    if frames["2afc"] is not None:
        frames["2afc"] = complete_comparisons(frames["2afc"])
    return frames


def complete_comparisons(frame: pd.DataFrame) -> pd.DataFrame | None:
    """Only comparisons with both presentations answered (the validator requires both)."""
    group_a = (frame["race_a"] + "|" + frame["gender_a"]).to_numpy()
    group_b = (frame["race_b"] + "|" + frame["gender_b"]).to_numpy()
    pair = np.where(group_a < group_b, group_a + "/" + group_b, group_b + "/" + group_a)
    keys = [frame[c] for c in ("model", "scenario", "variant", "occupation", "template")]
    sizes = frame.groupby([*keys, pd.Series(pair, index=frame.index)])["presentation"].transform(
        "nunique"
    )
    complete = frame[sizes == 2].reset_index(drop=True)
    return complete if len(complete) else None


def full_report(
    rows: Iterable[Mapping[str, Any]],
    *,
    source_genders: Mapping[tuple[str, str], str] | None = None,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    seed: int = 0,
    meta: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """report.json: ``models.<model>.{2afc,mcq,salary}`` from the statistics core, plus
    ``models.<model>.source_gender_split`` and ``.variants``, ``discard_table``, ``spearman``."""
    frames = answer_frames(rows)
    present = {k: v for k, v in frames.items() if v is not None}
    report: dict[str, Any] = {"report_version": REPORT_VERSION, **dict(meta or {})}
    if not present:
        report["models"] = {}
        return report
    report.update(
        reflect_report(
            frames["2afc"],
            frames["mcq"],
            frames["salary"],
            n_resamples=n_resamples,
            rng=seed,
        )
    )
    if frames["2afc"] is not None:
        report["discard_table"] = two_afc_discard_table(frames["2afc"])
    for model, block in report["models"].items():
        own = {k: (None if v is None else v[v["model"] == model]) for k, v in frames.items()}
        if source_genders:
            block["source_gender_split"] = source_gender_split(own, source_genders)
        block["variants"] = variant_comparisons(own, n_resamples=n_resamples, seed=seed)
    return report


def _first_samples(frame: pd.DataFrame | None) -> pd.DataFrame | None:
    """MCQ rows of sample 0 only (one answer per image, as the variant comparison needs)."""
    return None if frame is None else frame[frame["sample_index"] == 0]


def _originals(frame: pd.DataFrame | None) -> pd.DataFrame | None:
    if frame is None:
        return None
    subset = frame[frame["variant"] == "original"]
    return subset if len(subset) else None


def source_gender_split(
    frames: Mapping[str, pd.DataFrame | None], source_genders: Mapping[tuple[str, str], str]
) -> dict[str, Any]:
    """Matched-only vs swapped-only gender split per scenario and question (originals)."""
    out: dict[str, Any] = {"2afc": {}, "mcq": {}}
    two_afc = _originals(frames.get("2afc"))
    if two_afc is not None:
        records = two_afc_records(two_afc)
        for scenario, group in records.groupby("scenario", sort=True):
            out["2afc"][str(scenario)] = two_afc_source_gender_split(group, source_genders)
    mcq = _originals(frames.get("mcq"))
    if mcq is not None:
        records = mcq_records(mcq)
        for question, group in records.groupby("question", sort=True):
            out["mcq"][str(question)] = mcq_source_gender_split(group, source_genders)
    return out


def variant_comparisons(
    frames: Mapping[str, pd.DataFrame | None], *, n_resamples: int, seed: int
) -> dict[str, Any]:
    """Mirrored and cropped images against the originals (per-image agreement, ΔJSD)."""
    out: dict[str, Any] = {}
    mcq = _first_samples(frames.get("mcq"))
    if mcq is not None and mcq["variant"].nunique() > 1:
        records = mcq_records(mcq)
        for variant in sorted(set(records["variant"]) - {"original"}):
            for question, group in records.groupby("question", sort=True):
                out.setdefault(variant, {}).setdefault("mcq", {})[str(question)] = (
                    mcq_variant_comparison(
                        group, variant=variant, n_resamples=max(n_resamples, 1), rng=seed
                    )
                )
    two_afc = frames.get("2afc")
    if two_afc is not None and two_afc["variant"].nunique() > 1:
        records = two_afc_records(two_afc)
        for variant in sorted(set(records["variant"]) - {"original"}):
            for scenario, group in records.groupby("scenario", sort=True):
                out.setdefault(variant, {}).setdefault("2afc", {})[str(scenario)] = (
                    two_afc_variant_agreement(group, variant=variant)
                )
    return out

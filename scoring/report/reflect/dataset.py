"""The REFLECT part of a report: stored answer rows → frames → the statistics core → one dict.

Django-free. ``full_report`` is the statistics block (the staff page's cached report);
``reflect_part`` adds what the report folder records beside it (the face set, the runs, the
audited system, the answer counts, the limitations) and is what ``verify_report`` recomputes
from ``data/reflect_answers.jsonl``. The rows are the answer dump of docs/reflect.md (the same dicts the database
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

from scoring.reflect.answer_parsing import ERROR, split_explanation
from scoring.report.document_types import ReflectPart
from scoring.report.reflect.text import limitations
from scoring.report.schema import REFLECT_PART
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
PART_SCHEMA = REFLECT_PART
# REFLECT asks a model to pick, rank and pay people from their faces: recruitment, selection and
# pay decisions are Annex III point 4 (employment) uses, so the Article 10 route applies unless
# the caller states another kind (docs/reflect.md, "The report").
DEFAULT_SYSTEM_KIND = "high_risk"
DEFAULT_SETTINGS = {"n_resamples": DEFAULT_N_RESAMPLES, "seed": 0, "confidence": 0.95, "min_n": 30}


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


# --- the report part -------------------------------------------------------------------------


def reflect_part(answers: list[Mapping[str, Any]], context: Mapping[str, Any]) -> ReflectPart:
    """The REFLECT part of a report from its inputs: every answer row (the dump format, errors
    included) and the context recorded beside them (``data/reflect_context.json``: the face
    set, the runs, the audited system, the settings, the source genders)."""
    settings = {**DEFAULT_SETTINGS, **context["settings"]}
    genders = context.get("source_genders")
    statistics = full_report(
        answers,
        source_genders=None if genders is None else {(o, t): g for o, t, g in genders},
        n_resamples=settings["n_resamples"],
        seed=settings["seed"],
    )
    part: ReflectPart = {
        "schema": PART_SCHEMA,
        "face_set": dict(context["face_set"]),
        "system": dict(context["system"]),
        "runs": list(context["runs"]),
        "settings": settings,
        "answers": answer_counts(answers),
        **statistics,
    }
    part["limitations"] = limitations(part)
    return part


def answer_counts(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Answers per status, task and model, and the first and last answer time."""
    by_status: dict[str, int] = {}
    by_model: dict[str, dict[str, int]] = {}
    times = []
    total = 0
    for row in rows:
        total += 1
        status = str(row.get("status"))
        by_status[status] = by_status.get(status, 0) + 1
        tasks = by_model.setdefault(str(row["model"]), {})
        tasks[row["task"]] = tasks.get(row["task"], 0) + 1
        if row.get("answered_at"):
            times.append(str(row["answered_at"]))
    return {
        "n_answers": total,
        "by_status": dict(sorted(by_status.items())),
        "by_model": {model: dict(sorted(t.items())) for model, t in sorted(by_model.items())},
        "answered_from": min(times) if times else None,
        "answered_to": max(times) if times else None,
    }


def dump_context(
    rows: list[Mapping[str, Any]],
    *,
    sources: list[str],
    n_resamples: int,
    seed: int,
    min_n: int = DEFAULT_SETTINGS["min_n"],
    system_kind: str | None = None,
    intended_purpose: str = "",
) -> dict[str, Any]:
    """The context of answers read from dumps (``reflect_report --answers``): what the rows
    tell (templates, occupations, source genders); the face set's own records are not there."""
    genders = {(r["occupation"], r["template"]): r.get("source_gender") or "" for r in rows}
    complete = bool(genders) and all(genders.values())
    return {
        "face_set": {
            "name": ", ".join(sources),
            "slug": "",
            "description": "answers read from dump files",
            "counts": {
                "occupations": len({occupation for occupation, _ in genders}),
                "templates": len(genders),
            },
        },
        "system": {
            "system_kind": system_kind or DEFAULT_SYSTEM_KIND,
            "intended_purpose": intended_purpose,
            "kind_source": "stated" if system_kind else "default",
        },
        "runs": [],
        "source_genders": [[o, t, g] for (o, t), g in sorted(genders.items())]
        if complete
        else None,
        "settings": {"n_resamples": n_resamples, "seed": seed, "min_n": min_n},
        "answers_fingerprint": None,
    }

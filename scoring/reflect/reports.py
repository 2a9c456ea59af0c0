"""The report of a face set, from the database or from answer dumps, and its cache.

``report_compute`` is the one entry point the command, the staff page and the static export
share; the arithmetic is in report.py and scoring/stats.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.utils import timezone

from generation.models import FaceSet
from scoring.reflect import selectors
from scoring.reflect.models import ReflectReport
from scoring.reflect.report import full_report
from scoring.stats.bootstrap import DEFAULT_N_RESAMPLES

PAGE_RESAMPLES = 1000  # the staff page's bootstrap; the command defaults to more


def run_summaries(*, face_set: FaceSet) -> list[dict[str, Any]]:
    return [
        {
            "run_id": run.pk,
            "model": run.label,
            "model_name": run.model_name,
            "backend": run.backend_config,
            "decoding": run.decoding,
            "prompt_version": run.prompt_version,
            "explain": run.explain,
            "progress": selectors.run_progress(run=run),
        }
        for run in selectors.runs_of(face_set=face_set)
    ]


def report_compute(
    *, face_set: FaceSet, n_resamples: int = DEFAULT_N_RESAMPLES, seed: int = 0
) -> dict[str, Any]:
    meta = {
        "face_set": face_set.name,
        "generated_at": timezone.now().isoformat(),
        "runs": run_summaries(face_set=face_set),
    }
    return full_report(
        selectors.answer_rows(face_set=face_set),
        source_genders=selectors.source_genders(face_set=face_set),
        n_resamples=n_resamples,
        seed=seed,
        meta=meta,
    )


def report_from_rows(
    rows: Iterable[Mapping[str, Any]],
    *,
    source,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    seed: int = 0,
) -> dict[str, Any]:
    """The report of answer-dump rows (no database, no model)."""
    rows = list(rows)
    genders = {(r["occupation"], r["template"]): r.get("source_gender") or "" for r in rows}
    complete = all(genders.values()) and bool(genders)
    return full_report(
        rows,
        source_genders=genders if complete else None,
        n_resamples=n_resamples,
        seed=seed,
        meta={"answers_from": list(source) if not isinstance(source, str) else [source]},
    )


def report_cached(*, face_set: FaceSet) -> tuple[dict[str, Any] | None, bool]:
    """(the last computed report or None, whether it is still current)."""
    cached = ReflectReport.objects.filter(face_set=face_set).first()
    if cached is None:
        return None, False
    return cached.report, cached.fingerprint == selectors.answers_fingerprint(face_set=face_set)


def report_refresh(*, face_set: FaceSet, n_resamples: int = PAGE_RESAMPLES) -> dict[str, Any]:
    """Compute the report and store it as the set's cached report."""
    fingerprint = selectors.answers_fingerprint(face_set=face_set)
    report = report_compute(face_set=face_set, n_resamples=n_resamples)
    ReflectReport.objects.update_or_create(
        face_set=face_set, defaults={"fingerprint": fingerprint, "report": report}
    )
    return report

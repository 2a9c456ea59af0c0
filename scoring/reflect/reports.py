"""The staff page's REFLECT statistics of a face set and their cache (a thin caller).

The arithmetic is ``scoring.report.reflect.dataset.full_report`` (and scoring/stats); the
``reflect_report`` command writes the full report folder through ``scoring.report``.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from generation.models import FaceSet
from scoring.reflect import selectors
from scoring.reflect.models import ReflectReport
from scoring.report.reflect.dataset import full_report
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

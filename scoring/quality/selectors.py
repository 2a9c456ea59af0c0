"""Reads of the annotator-quality page: the statistics of ``scoring.stats.annotator_quality`` on
the rows ``annotations.quality.actions`` builds, beside each annotator's state (docs/annotation.md#annotator-quality)."""

from __future__ import annotations

from annotations.models import Annotator, Study
from annotations.quality import actions as quality
from scoring.stats.annotator_quality import annotator_quality


def study_annotator_quality(*, study: Study) -> list[dict]:
    """One entry per annotator of the study: the annotator, and their quality measures."""
    measures = annotator_quality(quality.quality_answer_rows(study=study))
    rows = []
    for annotator in quality.study_annotators(study=study):
        name = annotator.user.get_username()
        rows.append({"annotator": annotator, "quality": measures.get(name), **_state(annotator)})
    return rows


def _state(annotator: Annotator) -> dict:
    # quality.study_annotators loads the annotator's exclusion in this study only.
    exclusions = getattr(annotator, "study_label_exclusions", None) or [None]
    return {"paused": not annotator.is_active, "exclusion": exclusions[0]}

"""The inputs of a comparison and its document (docs/report.md, "Models side by side").

One study: its generators are the models. Two or more studies (e.g. two versions of one model
audited with the same prompt set): each study is a model, named by its slug.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
from django.utils import timezone

from annotations.models import Study
from scoring.metrics.document import study_metric_frames
from scoring.report.dataset import source_frames
from scoring.report.document_types import ModelComparison
from scoring.report.schema import MODEL_COMPARISON
from scoring.stats.bootstrap import DEFAULT_N_RESAMPLES
from scoring.stats.safety_utility import BENIGN, rows_of_intent
from scoring.stats.study_metrics import validated_frames
from scoring.stats.version_change import comparison_by_source

GENERATOR, STUDY = "generator", "study"


class ComparisonError(ValueError):
    """A comparison that cannot be made from what was chosen; the message is one line."""


@dataclass(frozen=True)
class ComparisonInputs:
    """Per source (``human``, ``auto:<judge>``), the benign rows of every chosen study, with the
    column that names each row's model."""

    studies: tuple[Study, ...]
    model_column: str
    models: list[str]
    sources: dict[str, pd.DataFrame]


def comparison_inputs(*, studies: Sequence[Study]) -> ComparisonInputs:
    """The rows the comparison counts: the statistics' own frames of each study (gold items and
    excluded annotators left out, benign items only, as the rates)."""
    studies = tuple(sorted(set(studies), key=lambda study: study.slug))
    if not studies:
        raise ComparisonError("choose at least one study")
    model_column = GENERATOR if len(studies) == 1 else STUDY
    per_source: dict[str, list[pd.DataFrame]] = {}
    for study in studies:
        annotations, judgments = validated_frames(*study_metric_frames(study=study))
        frames = source_frames(
            rows_of_intent(annotations, BENIGN), rows_of_intent(judgments, BENIGN)
        )
        for source, frame in frames.items():
            if model_column == STUDY:
                frame = frame.assign(study=study.slug)
            per_source.setdefault(source, []).append(frame[frame[model_column] != ""])
    sources = {
        source: pd.concat(frames, ignore_index=True)
        for source, frames in sorted(per_source.items())
    }
    models = sorted({str(m) for frame in sources.values() for m in frame[model_column].unique()})
    return ComparisonInputs(studies, model_column, models, sources)


HUMAN = "human"


def default_source(inputs: ComparisonInputs) -> str | None:
    """The labels a comparison shows unless asked: people's where there are any (a study's
    judges come first in name order, and may have judged none of the compared rows), else the
    first judge."""
    if HUMAN in inputs.sources:
        return HUMAN
    return next(iter(inputs.sources), None)


def comparison_document(
    inputs: ComparisonInputs,
    *,
    baseline: str | None = None,
    candidate: str | None = None,
    sources: Sequence[str] | None = None,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    seed: int = 0,
) -> ModelComparison:
    """The ``acrb-model-comparison/1`` document: every model's rates and Δ per source, and the
    change from ``baseline`` to ``candidate`` (by default the first two models in name order).
    ``sources`` keeps some sources only (the page shows one)."""
    if len(inputs.models) < 2:
        kind = "generators" if inputs.model_column == GENERATOR else "studies with answers"
        found = ", ".join(inputs.models) or "none"
        raise ComparisonError(f"a comparison needs two or more {kind}; found {found}")
    baseline = baseline or inputs.models[0]
    candidate = candidate or next(m for m in inputs.models if m != baseline)
    for role, model in (("baseline", baseline), ("candidate", candidate)):
        if model not in inputs.models:
            raise ComparisonError(
                f"unknown {role} {model!r}; choose one of {', '.join(inputs.models)}"
            )
    if baseline == candidate:
        raise ComparisonError("the baseline and the candidate must be two different models")
    chosen = inputs.sources
    if sources:
        unknown = [source for source in sources if source not in chosen]
        if unknown:
            raise ComparisonError(
                f"unknown source {unknown[0]!r}; choose one of {', '.join(chosen) or 'none'}"
            )
        chosen = {source: chosen[source] for source in sources}
    return {
        "schema": MODEL_COMPARISON,
        "studies": [{"slug": study.slug, "name": study.name} for study in inputs.studies],
        "models_side_by_side": comparison_by_source(
            chosen,
            model_column=inputs.model_column,
            baseline=baseline,
            candidate=candidate,
            n_resamples=n_resamples,
            seed=seed,
        ),
        "generated_at": timezone.now().isoformat(),
    }

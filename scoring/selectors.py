"""Reads for scoring: judge configs, the items to score, judgment counts, thresholds, labels.

Every selector runs a fixed number of queries, whatever the size of the study.
"""

from __future__ import annotations

import copy
from typing import Any

from django.conf import settings
from django.db.models import Count, Q

from annotations.models import (
    Annotation,
    AutomatedJudgment,
    BackgroundJob,
    EquivalenceMargin,
    Item,
    Study,
)
from generation.backends.registry import not_configured
from scoring.stats.equivalence import DEFAULT_DELTA_MARGIN
from scoring.stats.study_rates import MEASURES

from .models import RefusalThreshold, ScoringBatch

SCORING_JOB_KIND = "score_study"


class JudgeNotConfigured(LookupError):
    """The name is not a key of ``settings.ACRB_JUDGES`` (the YAML file's ``judges:``)."""


def judge_names() -> list[str]:
    return sorted(settings.ACRB_JUDGES)


def judge_config(
    *, study: Study, judge_name: str, configs: dict[str, dict] | None = None
) -> dict[str, Any]:
    """The configured judge (``name`` defaults to its key), with the study's calibrated τ per
    generator merged into ``clip_tau_by_generator`` for a hard-refusal judge (one query).

    ``configs`` (name -> config) is looked at before ``settings.ACRB_JUDGES`` (``run_audit``
    passes the judges of its YAML file)."""
    configs = {**settings.ACRB_JUDGES, **(configs or {})}
    if judge_name not in configs:
        raise JudgeNotConfigured(not_configured("judge", judge_name, configs))
    config = copy.deepcopy(configs[judge_name])
    config.setdefault("name", judge_name)
    config["version"] = str(config.get("version", "1"))
    if config.get("kind") == "hard_refusal":
        calibrated = {
            row.generator: row.tau
            for row in refusal_thresholds_current(study=study, judge=config["name"])
            if row.generator
        }
        config["clip_tau_by_generator"] = {**config.get("clip_tau_by_generator", {}), **calibrated}
    return config


ITEM_FIELDS_FOR_SCORING = (
    "image", "image_sha256", "source_image", "prompt", "cue", "generator",
    "provider_refusal_code", "provider_refusal_message", "generation_params",
    "attribute_value__cue_description",
)  # fmt: skip


def items_for_scoring(*, study: Study, item_ids: list[int] | None = None) -> list[Item]:
    """The study's items (all, or the given primary keys) in a stable order (one query),
    with only the fields a judge's input is built from (``services.item_input``): a row's
    other columns cost time to convert, once per item of every scoring run."""
    items = (
        Item.objects.filter(study=study)
        .select_related("attribute_value")
        .only(*ITEM_FIELDS_FOR_SCORING)
        .order_by("pk")
    )
    if item_ids is not None:
        items = items.filter(pk__in=item_ids)
    return list(items)


def item_pks(*, study: Study) -> list[int]:
    return list(Item.objects.filter(study=study).order_by("pk").values_list("pk", flat=True))


def judgment_counts(*, study: Study) -> list[dict]:
    """Per judge and version: judgments, errors, invalid answers, refusals (one query).

    Invalid means what ``ScoreSummary.invalid`` counts: the judge answered without a verdict
    (no error, no hard-refusal label and no cue label; scoring.services). A cue judge's valid
    verdict also leaves ``hard_refusal`` empty, so the cue label tells the two apart.
    """
    rows = (
        AutomatedJudgment.objects.filter(item__study=study)
        .values("judge", "judge_version")
        .annotate(
            total=Count("id"),
            errors=Count("id", filter=~Q(error="")),
            invalid=Count("id", filter=Q(error="", hard_refusal__isnull=True, cue_label="")),
            refusals=Count("id", filter=Q(hard_refusal=True)),
        )
        .order_by("judge", "judge_version")
    )
    return list(rows)


def judgment_errors(*, study: Study, limit: int = 20) -> list[dict]:
    return list(
        AutomatedJudgment.objects.filter(item__study=study)
        .exclude(error="")
        .values("item__item_id", "judge", "judge_version", "error")
        .order_by("-id")[:limit]
    )


def review_items(*, study: Study, limit: int = 100) -> tuple[int, list[dict]]:
    """(how many items need review, the first ``limit`` of them) — two queries."""
    flagged = Item.objects.filter(study=study, needs_review=True)
    rows = flagged.values("pk", "item_id", "generator", "cue", "attribute_value__value").order_by(
        "item_id"
    )[:limit]
    return flagged.count(), list(rows)


def scoring_jobs(*, study: Study, limit: int = 10) -> list[BackgroundJob]:
    return list(BackgroundJob.objects.filter(study=study, kind=SCORING_JOB_KIND)[:limit])


def scoring_job_totals(*, job_id: int) -> dict:
    """Items done and errors over a job's batches, and whether any batch is still queued."""
    return ScoringBatch.objects.filter(job_id=job_id).aggregate(
        done=Count("id", filter=Q(status=ScoringBatch.Status.DONE)),
        failed=Count("id", filter=Q(status=ScoringBatch.Status.FAILED)),
        queued=Count("id", filter=Q(status=ScoringBatch.Status.QUEUED)),
    )


def refusal_thresholds_current(*, study: Study, judge: str | None = None) -> list[RefusalThreshold]:
    """The newest threshold per (judge, generator); the pooled row has generator ''."""
    rows = RefusalThreshold.objects.filter(study=study).order_by("-created_at", "-id")
    if judge is not None:
        rows = rows.filter(judge=judge)
    newest: dict[tuple[str, str], RefusalThreshold] = {}
    for row in rows:
        newest.setdefault((row.judge, row.generator), row)
    return sorted(newest.values(), key=lambda r: (r.judge, r.generator))


def human_refusal_majority(*, study: Study) -> dict[int, bool]:
    """Item pk -> the majority hard-refusal answer of its non-gold annotations (ties left out)."""
    rows = (
        Annotation.objects.filter(
            assignment__item__study=study,
            assignment__item__is_gold=False,
            assignment__item__excluded_at__isnull=True,  # excluded items calibrate nothing
        )
        .values("assignment__item")
        .annotate(total=Count("id"), refusals=Count("id", filter=Q(hard_refusal=True)))
    )
    return {
        row["assignment__item"]: 2 * row["refusals"] > row["total"]
        for row in rows
        if 2 * row["refusals"] != row["total"]
    }


def refusal_scores(*, study: Study, judge: str, judge_version: str) -> list[dict]:
    """Item pk, generator and CLIP refusal similarity of every scored, error-free judgment."""
    return list(
        AutomatedJudgment.objects.filter(
            item__study=study, judge=judge, judge_version=judge_version, error=""
        )
        .exclude(score__isnull=True)
        .values("item_id", "item__generator", "score")
    )


def equivalence_margins(*, study: Study) -> dict:
    """Per outcome: the study's δ (``DEFAULT_DELTA_MARGIN`` where none was set), who set it and
    when, whether a δ was set after the study had human labels (``set_after_data``: chosen
    with the data in view, which the report flags), and every earlier δ (``history``)."""
    rows = list(
        EquivalenceMargin.objects.filter(study=study)
        .select_related("set_by")
        .order_by("set_at", "id")
    )
    margins = {}
    for outcome in MEASURES:
        history = [
            {
                "delta_margin": row.delta_margin,
                "set_by": row.set_by.username if row.set_by else None,
                "set_at": row.set_at.isoformat(),
                "labels_existed": row.labels_existed,
            }
            for row in rows
            if row.outcome == outcome
        ]
        current = history[-1] if history else None
        margins[outcome] = {
            "delta_margin": current["delta_margin"] if current else DEFAULT_DELTA_MARGIN,
            "default": current is None,
            "set_by": current["set_by"] if current else None,
            "set_at": current["set_at"] if current else None,
            "set_after_data": any(row["labels_existed"] for row in history),
            "history": history,
        }
    return margins

"""Reads of the study audit report: the design from the database, and the report itself,
cached while the study's data is unchanged (docs/report.md).

The numbers come from ``scoring.report.dataset.audit_report`` on the frames
``annotations.selectors`` builds; this module only reads the design and caches.
"""

from __future__ import annotations

from django.db.models import Max, Min

from annotations import selectors
from annotations.models import Annotation, AttributeValue, AutomatedJudgment, Item, Study
from annotations.staff.audit_context import AUDIT_CONTEXT_FIELDS


def design_records(*, study: Study) -> dict:
    """The study's attribute values, its included non-gold items and their judgments (failed
    ones included), as plain records, in three queries (a report folder holds them too)."""
    attribute_values = list(
        AttributeValue.objects.filter(study=study)
        .values("attribute", "value", "cue_description", "is_neutral")
        .order_by("attribute", "value")
    )
    items = [
        {
            "item_id": row["item_id"],
            "attribute": row["attribute_value__attribute"],
            "value": row["attribute_value__value"],
            "base_prompt_id": row["base_prompt_id"],
            "domain": row["domain"],
            "generator": row["generator"],
            "mode": row["mode"],
            "intent": row["intent"],
        }
        for row in Item.objects.included()
        .filter(study=study, is_gold=False)
        .values(
            "item_id",
            "attribute_value__attribute",
            "attribute_value__value",
            "base_prompt_id",
            "domain",
            "generator",
            "mode",
            "intent",
        )
        .order_by("item_id")
    ]
    judgment_log = [
        {
            "item_id": row["item__item_id"],
            "judge": row["judge"],
            "judge_version": row["judge_version"],
            "failed": row["error"] != "",
        }
        for row in AutomatedJudgment.objects.filter(
            selectors.INCLUDED_JUDGMENTS, item__study=study, item__is_gold=False
        )
        .values("item__item_id", "judge", "judge_version", "error")
        .order_by("item__item_id", "judge", "judge_version")
    ]
    return {"attribute_values": attribute_values, "items": items, "judgment_log": judgment_log}


def study_facts(*, study: Study) -> dict:
    """The study's plain fields and the dates its evidence was recorded (ISO strings or None)."""
    answered = Annotation.objects.filter(assignment__batch__study=study).aggregate(
        first=Min("submitted_at"), last=Max("submitted_at")
    )
    judged = AutomatedJudgment.objects.filter(item__study=study).aggregate(
        first=Min("created_at"), last=Max("created_at")
    )

    def iso(moment):
        return moment.isoformat(timespec="seconds") if moment else None

    return {
        "slug": study.slug,
        "name": study.name,
        "mode": study.mode,
        "overlap_k": study.overlap_k,
        "description": study.description,
        "synthetic_demo": study.is_synthetic_demo,
        "created_at": iso(study.created_at),
        "annotations_from": iso(answered["first"]),
        "annotations_to": iso(answered["last"]),
        "judgments_from": iso(judged["first"]),
        "judgments_to": iso(judged["last"]),
        **study_audit_context(study=study),
    }


def study_audit_context(*, study: Study) -> dict:
    """What staff state on the study for the legal mapping and the annotator-pool section."""
    return {field: getattr(study, field) for field in AUDIT_CONTEXT_FIELDS}

"""The inputs of a study's report (and of a REFLECT part), read from the database as plain records (docs/report.md,
"Verifying a report"): exactly what a report folder holds in ``data/`` and what
``bundle.report_from_inputs`` turns into the report, so the page, the command and the verifier
build it the same way.
"""

from __future__ import annotations

import datetime as dt
import hashlib

from django.template.loader import get_template

from annotations import selectors
from annotations.models import Batch, Item, Study
from generation.models import PlannedPrompt, StudyPlan
from scoring import selectors as scoring_selectors
from scoring.reflect import reports as reflect_reports
from scoring.reflect import selectors as reflect_selectors
from scoring.report import selectors as report_selectors
from scoring.report.datasheet import guidelines_text
from scoring.report.reflect.dataset import DEFAULT_SYSTEM_KIND

GUIDELINES_TEMPLATE = "annotations/guidelines.html"
PLAN_ROW_FIELDS = (
    "plan_id",
    "position",
    "prompt_id",
    "domain",
    "attribute",
    "value",
    "status",
    "skip_reason",
    "operation",
    "slot_rule",
    "source",
)


def report_inputs(*, study: Study, references: dict | None = None, **options) -> dict:
    """Every record and fact the report is computed from, JSON-ready."""
    design = report_selectors.design_records(study=study)
    return {
        "annotations": answer_records(study=study),
        "items": design["items"],
        "judgment_log": design["judgment_log"],
        "judgments": [_plain(row) for row in selectors.judgment_rows(study=study)],
        "planned_prompts": list(
            PlannedPrompt.objects.filter(study=study)
            .order_by("position", "plan_id")
            .values(*PLAN_ROW_FIELDS)
        ),
        "context": {
            "study": report_selectors.study_facts(study=study),
            "attribute_values": design["attribute_values"],
            "references": dict(references or {}),
            "settings": dict(options),
            "data_fingerprint": selectors.study_data_fingerprint(study=study),
            "batches": batch_records(study=study),
            "guidelines": guidelines_shown(),
            "plan": plan_record(study=study),
            "equivalence_margins": scoring_selectors.equivalence_margins(study=study),
        },
    }


def answer_records(*, study: Study) -> list[dict]:
    """Every counted answer, gold ones included with the gold item's known answer."""
    gold = {
        row["item_id"]: row
        for row in Item.objects.included()
        .filter(study=study, is_gold=True)
        .values("item_id", "gold_hard_refusal", "gold_cue")
    }
    out = []
    for row in selectors.annotation_rows(study=study, include_gold=True):
        record = _plain(row)
        known = gold.get(row["item_id"]) if row["is_gold"] else None
        record["gold_hard_refusal"] = known["gold_hard_refusal"] if known else None
        record["gold_cue"] = (known["gold_cue"] or None) if known else None
        out.append(record)
    return out


def batch_records(*, study: Study) -> list[dict]:
    return [
        {
            "name": batch.name,
            "policy": batch.policy,
            "policy_label": batch.get_policy_display(),
            "overlap_k": batch.overlap_k,
            "seed": batch.seed,
            "params": batch.params,
            "created_at": batch.created_at.isoformat(timespec="seconds"),
        }
        for batch in Batch.objects.filter(study=study).order_by("created_at", "id")
    ]


def guidelines_shown() -> dict:
    """The guidelines page as served now, with a hash that names its version."""
    source = get_template(GUIDELINES_TEMPLATE).template.source
    return {
        "template": GUIDELINES_TEMPLATE,
        "sha256": hashlib.sha256(source.encode("utf-8")).hexdigest(),
        "text": guidelines_text(source),
        "note": "The guidelines as the tool serves them at report time; earlier versions are "
        "not recorded, so a study annotated before a change saw another text.",
    }


def plan_record(*, study: Study) -> dict | None:
    plan = (
        StudyPlan.objects.filter(study=study)
        .values(
            "taxonomy", "taxonomy_source", "base_prompts_source", "base_prompts_sha256", "options"
        )
        .first()
    )
    return plan


def _plain(row: dict) -> dict:
    return {
        key: value.isoformat() if isinstance(value, dt.datetime) else value
        for key, value in row.items()
    }


def reflect_inputs(
    *,
    face_set,
    n_resamples: int,
    seed: int,
    min_n: int = 30,
    system_kind: str | None = None,
    intended_purpose: str = "",
) -> dict:
    """The REFLECT part's inputs: every stored answer of the face set (the dump rows, transport
    errors included) and the context recorded beside them (``reflect_part`` reads both).
    ``system_kind`` None: the default for REFLECT's decision tasks (Annex III high-risk)."""
    genders = reflect_selectors.source_genders(face_set=face_set)
    return {
        "answers": [_plain(row) for row in reflect_selectors.answer_rows(face_set=face_set)],
        "context": {
            "face_set": {
                "name": face_set.name,
                "slug": face_set.slug,
                "description": face_set.description,
                "counts": reflect_selectors.face_set_counts(face_set=face_set),
            },
            "system": {
                "system_kind": system_kind or DEFAULT_SYSTEM_KIND,
                "intended_purpose": intended_purpose,
                "kind_source": "stated" if system_kind else "default",
            },
            "runs": reflect_reports.run_summaries(face_set=face_set),
            "source_genders": None
            if genders is None
            else [
                [occupation, template, gender]
                for (occupation, template), gender in sorted(genders.items())
            ],
            "settings": {"n_resamples": n_resamples, "seed": seed, "min_n": min_n},
            "answers_fingerprint": reflect_selectors.answers_fingerprint(face_set=face_set),
        },
    }

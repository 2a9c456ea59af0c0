"""Reads of the study audit report: the design from the database, and the report itself,
cached while the study's data is unchanged (docs/report.md).

The numbers come from ``scoring.report.dataset.audit_report`` on the frames
``annotations.selectors`` builds; this module only reads the design and caches.
"""

from __future__ import annotations

from django.db.models import Count, Q

from annotations import selectors
from annotations.models import AttributeValue, AutomatedJudgment, Item, Study
from scoring.metrics import cached_for_study_data
from scoring.report import figures as report_figures
from scoring.report.bundle import report_from_inputs


def study_design(*, study: Study) -> dict:
    """Taxonomy, prompts, generators and judges of a study, in four queries."""
    taxonomy = [
        {"attribute": row["attribute"], "value": row["value"], "cue_description": row["cue_description"],
         "is_neutral": row["is_neutral"], "n_items": row["n_items"]}
        for row in AttributeValue.objects.filter(study=study)
        .annotate(
            n_items=Count("items", filter=Q(items__is_gold=False, items__excluded_at__isnull=True))
        )
        .values("attribute", "value", "cue_description", "is_neutral", "n_items")
        .order_by("attribute", "value")
    ]  # fmt: skip
    items = Item.objects.included().filter(study=study, is_gold=False)
    prompts = list(
        items.values("base_prompt_id", "domain")
        .annotate(n_items=Count("id"))
        .order_by("domain", "base_prompt_id")
    )
    domains: dict[str, dict] = {}
    for row in prompts:
        entry = domains.setdefault(
            row["domain"], {"domain": row["domain"], "n_base_prompts": 0, "n_items": 0}
        )
        entry["n_base_prompts"] += 1
        entry["n_items"] += row["n_items"]
    generators = list(
        items.values("generator", "mode")
        .annotate(n_items=Count("id"))
        .order_by("generator", "mode")
    )
    judges = list(
        AutomatedJudgment.objects.filter(
            selectors.INCLUDED_JUDGMENTS, item__study=study, item__is_gold=False
        )
        .values("judge", "judge_version")
        .annotate(
            n_judgments=Count("id", filter=Q(error="")), n_errors=Count("id", filter=~Q(error=""))
        )
        .order_by("judge", "judge_version")
    )
    return {"taxonomy": taxonomy, "domains": list(domains.values()), "prompts": prompts,
            "generators": generators, "judges": judges}  # fmt: skip


def study_facts(*, study: Study) -> dict:
    return {"slug": study.slug, "name": study.name, "mode": study.mode, "overlap_k": study.overlap_k,
            "description": study.description, "synthetic_demo": study.is_synthetic_demo,
            **study_audit_context(study=study)}  # fmt: skip


def study_audit_context(*, study: Study) -> dict:
    """What staff state on the study for the legal mapping and the annotator-pool section."""
    return {"system_kind": study.system_kind, "intended_purpose": study.intended_purpose,
            "annotator_recruitment": study.annotator_recruitment,
            "annotator_pay": study.annotator_pay}  # fmt: skip


# --- the report (dataset) -------------------------------------------------------------------


def report_document(*, study: Study, references: dict | None = None, **options) -> dict:
    """The audit report of a study, recomputed from its stored records through the same
    inputs a report folder holds (``report_inputs``; docs/report.md, "Verifying a report")."""
    # Imported here: the inputs module reads the design through this module's functions.
    from scoring.report.inputs import report_inputs

    return report_from_inputs(report_inputs(study=study, references=references, **options))


def report_document_cached(*, study: Study, references: dict | None = None, **options) -> dict:
    """The same report, reused while the study's data (its fingerprint) and the settings are unchanged."""
    return cached_for_study_data(
        "report",
        study=study,
        # The staff-stated context is no data the fingerprint sees: an edit must refresh the report.
        settings=[references or {}, options, study_audit_context(study=study)],
        compute=lambda: report_document(study=study, references=references, **options),
    )


def figure_image_cached(
    *, study: Study, report: dict, spec: dict, fmt: str, references: dict
) -> bytes:
    """A figure's bytes, drawn once per report (matplotlib takes a few hundred ms a figure)."""
    return cached_for_study_data(
        "report-figure",
        study=study,
        settings=[references or {}, {"figure": spec["key"], "fmt": fmt}],
        compute=lambda: report_figures.figure_image(report, spec, fmt),
    )

"""Reads of the study audit report: the design from the database, and the report itself,
cached while the study's data is unchanged (docs/report.md).

The numbers come from ``scoring.report.dataset.audit_report`` on the frames
``annotations.selectors`` builds; this module only reads the design and caches.
"""

from __future__ import annotations

from django.db.models import Count, Max, Min, Q

from annotations import selectors
from annotations.models import Annotation, AttributeValue, AutomatedJudgment, Item, Study
from scoring.metrics import cached_for_study_data, study_metric_frames
from scoring.report import figures as report_figures
from scoring.report.dataset import audit_report


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
    """The study's plain fields and the dates its evidence was recorded (ISO strings or None)."""
    answered = Annotation.objects.filter(assignment__batch__study=study).aggregate(
        first=Min("submitted_at"), last=Max("submitted_at")
    )
    judged = AutomatedJudgment.objects.filter(item__study=study).aggregate(
        first=Min("created_at"), last=Max("created_at")
    )

    def iso(moment):
        return moment.isoformat(timespec="seconds") if moment else None

    return {"slug": study.slug, "name": study.name, "mode": study.mode, "overlap_k": study.overlap_k,
            "description": study.description, "synthetic_demo": study.is_synthetic_demo,
            "created_at": iso(study.created_at),
            "annotations_from": iso(answered["first"]), "annotations_to": iso(answered["last"]),
            "judgments_from": iso(judged["first"]), "judgments_to": iso(judged["last"])}  # fmt: skip


# --- the report (dataset) -------------------------------------------------------------------


def report_document(*, study: Study, references: dict | None = None, **options) -> dict:
    """The audit report of a study, recomputed from its stored records."""
    annotations, judgments = study_metric_frames(study=study)
    return audit_report(
        annotations,
        judgments,
        study=study_facts(study=study),
        design=study_design(study=study),
        gold_accuracy=selectors.gold_accuracy(study=study),
        references=references,
        data_fingerprint=selectors.study_data_fingerprint(study=study),
        **options,
    )


def report_document_cached(*, study: Study, references: dict | None = None, **options) -> dict:
    """The same report, reused while the study's data (its fingerprint) and the settings are unchanged."""
    return cached_for_study_data(
        "report",
        study=study,
        settings=[references or {}, options],
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


def report_pdf_cached(*, study: Study, report: dict, references: dict) -> bytes:
    """The report's PDF, printed once per report (Chromium takes seconds a document)."""
    from scoring.report.render import render_report_pdf

    return cached_for_study_data(
        "report-pdf",
        study=study,
        settings=[references or {}, {"generated_at": report["provenance"]["generated_at"]}],
        compute=lambda: render_report_pdf(report),
    )

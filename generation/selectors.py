"""Reads of Stages I and II, each a fixed number of queries whatever the study's size."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count

from annotations.models import Item, Study
from generation.faces import EditQC, FaceBox, summarize_qc
from generation.models import (
    FaceEdit,
    FaceSet,
    FaceTemplate,
    GenerationRequest,
    PlannedPrompt,
    PromptRephrasing,
    StudyGenerator,
)
from generation.prompts.rephrase import RECORD_COLUMNS, RephraseRecord

Status = GenerationRequest.Status
FINISHED = (Status.DONE, Status.REFUSED, Status.ERROR)
OPEN = (Status.PENDING, Status.RUNNING)


@dataclass(frozen=True)
class PlanSummary:
    planned: int
    skipped: int
    skip_reasons: list[tuple[str, int]]  # (reason, rows), most frequent first
    by_attribute: list[tuple[str, int]]  # planned rows per attribute


def plan_summary(*, study: Study) -> PlanSummary:
    """Planned vs skipped rows of the study's plan (2 queries)."""
    by_status = dict(
        PlannedPrompt.objects.filter(study=study)
        .values_list("status")
        .annotate(rows=Count("pk"))
        .values_list("status", "rows")
    )
    reasons = (
        PlannedPrompt.objects.filter(study=study)
        .values_list("status", "skip_reason", "attribute")
        .annotate(rows=Count("pk"))
        .order_by()
    )
    skip_reasons: dict[str, int] = {}
    by_attribute: dict[str, int] = {}
    for status, reason, attribute, rows in reasons:
        if status == PlannedPrompt.Status.SKIPPED:
            skip_reasons[reason] = skip_reasons.get(reason, 0) + rows
        else:
            by_attribute[attribute] = by_attribute.get(attribute, 0) + rows
    return PlanSummary(
        planned=by_status.get(PlannedPrompt.Status.PLANNED, 0),
        skipped=by_status.get(PlannedPrompt.Status.SKIPPED, 0),
        skip_reasons=sorted(skip_reasons.items(), key=lambda pair: (-pair[1], pair[0])),
        by_attribute=sorted(by_attribute.items()),
    )


def planned_prompt_list(*, study: Study, status: str | None = None, limit: int = 200):
    rows = PlannedPrompt.objects.filter(study=study)
    if status:
        rows = rows.filter(status=status)
    return list(rows.order_by("position")[:limit])


@dataclass(frozen=True)
class RephrasingSummary:
    kept: int
    rejected: int
    reasons: list[tuple[str, int]]  # (reason, base prompts), most frequent first

    total = property(lambda self: self.kept + self.rejected)


def rephrasing_summary(*, study: Study) -> RephrasingSummary:
    """Kept vs rejected rewrites of the study's base prompts, by reason (1 query)."""
    rows = (
        PromptRephrasing.objects.filter(study=study)
        .values_list("kept", "reason")
        .annotate(prompts=Count("pk"))
        .order_by()
    )
    kept = rejected = 0
    reasons = []
    for is_kept, reason, prompts in rows:
        if is_kept:
            kept += prompts
        else:
            rejected += prompts
            reasons.append((reason, prompts))
    return RephrasingSummary(kept, rejected, sorted(reasons, key=lambda pair: (-pair[1], pair[0])))


def rephrasing_list(*, study: Study, kept: bool | None = None) -> list[PromptRephrasing]:
    rows = PromptRephrasing.objects.filter(study=study)
    if kept is not None:
        rows = rows.filter(kept=kept)
    return list(rows.order_by("position"))


def rephrasing_records(*, study: Study, kept: bool | None = None) -> list[RephraseRecord]:
    """The rows as the Django-free records the exports format (1 query)."""
    return [
        RephraseRecord(**{column: getattr(row, column) for column in RECORD_COLUMNS})
        for row in rephrasing_list(study=study, kept=kept)
    ]


@dataclass(frozen=True)
class StatusCounts:
    by_status: dict[str, int]
    by_generator: list[tuple[str, dict[str, int]]] = field(default_factory=list)
    error_examples: list[tuple[str, str]] = field(default_factory=list)

    def _count(self, *statuses) -> int:
        return sum(self.by_status.get(status, 0) for status in statuses)

    total = property(lambda self: sum(self.by_status.values()))
    done = property(lambda self: self._count(Status.DONE))
    refused = property(lambda self: self._count(Status.REFUSED))
    error = property(lambda self: self._count(Status.ERROR))
    finished = property(lambda self: self._count(*FINISHED))
    open = property(lambda self: self._count(*OPEN))

    def summary(self) -> str:
        return (
            f"{self.done} images, {self.refused} refused, {self.error} errors "
            f"(of {self.total} requests)" + (" — rerun to retry the errors" if self.error else "")
        )


def generation_status_counts(*, study: Study, error_examples: int = 20) -> StatusCounts:
    """Request counts per status, overall and per generator (2 queries)."""
    rows = (
        GenerationRequest.objects.filter(study=study)
        .values_list("generator__name", "status")
        .annotate(requests=Count("pk"))
        .order_by("generator__name")
    )
    by_status: dict[str, int] = {}
    by_generator: dict[str, dict[str, int]] = {}
    for generator, status, requests in rows:
        by_status[status] = by_status.get(status, 0) + requests
        by_generator.setdefault(generator, {})[status] = requests
    errors = list(
        GenerationRequest.objects.filter(study=study, status=Status.ERROR)
        .values_list("planned_prompt__plan_id", "error")
        .order_by("pk")[:error_examples]
    )
    return StatusCounts(by_status, sorted(by_generator.items()), errors)


def generation_request_list(*, study: Study, status: str | None = None, limit: int = 200):
    """The study's requests with their prompt, generator and item (1 query)."""
    rows = GenerationRequest.objects.filter(study=study).select_related(
        "planned_prompt", "generator", "item"
    )
    if status:
        rows = rows.filter(status=status)
    return list(rows.order_by("pk")[:limit])


def study_generator_list(*, study: Study):
    return list(StudyGenerator.objects.filter(study=study).order_by("name"))


def duplicate_images(*, study: Study) -> list[tuple[str, int]]:
    """Content hashes shared by more than one generated item (1 query)."""
    return list(
        Item.objects.filter(study=study, generation_request__isnull=False)
        .exclude(image_sha256="")
        .values_list("image_sha256")
        .annotate(items=Count("pk"))
        .filter(items__gt=1)
        .values_list("image_sha256", "items")
        .order_by("-items")
    )


def studies_with_plans():
    """Every study with its plan-row and request counts (1 query)."""
    return list(
        Study.objects.annotate(
            planned_rows=Count("planned_prompts", distinct=True),
            requests=Count("generation_requests", distinct=True),
        ).order_by("-created_at")
    )


# --- face-only sets -------------------------------------------------------------------------


def face_set_list():
    """The edit jobs (face sets made here), newest first; imported sets have no generator."""
    return list(
        FaceSet.objects.exclude(generator_name="")
        .annotate(template_count=Count("templates"))
        .order_by("-created_at")
    )


def face_templates_with_edits(*, face_set: FaceSet) -> list[FaceTemplate]:
    """Templates with their edits prefetched (2 queries)."""
    return list(
        FaceTemplate.objects.filter(face_set=face_set)
        .prefetch_related("edits")
        .order_by("occupation", "name")
    )


def face_edit_get(*, face_set: FaceSet, edit_id: int) -> FaceEdit:
    return FaceEdit.objects.select_related("template").get(pk=edit_id, template__face_set=face_set)


@dataclass(frozen=True)
class TemplateQC:
    template: FaceTemplate
    edits: list[FaceEdit]
    summary: object  # generation.faces.QCSummary over the template's finished edits


def face_qc_rows(*, face_set: FaceSet) -> list[TemplateQC]:
    """Each template with its edits and the per-template QC summary (2 queries)."""
    rows = []
    for template in face_templates_with_edits(face_set=face_set):
        edits = list(template.edits.all())
        box = FaceBox(**template.face_box) if template.face_box else None
        measured = [
            EditQC(e.inside_diff, e.outside_diff, e.ratio, e.flagged, e.flag_reason, box)
            for e in edits
            if e.status == FaceEdit.Status.DONE
        ]
        rows.append(TemplateQC(template, edits, summarize_qc(measured)))
    return rows

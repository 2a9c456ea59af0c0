"""Reads of the REFLECT app: face sets with counts, planned and answered requests, the
answer rows in the dump format (docs/reflect.md, "Answer dump"), run progress."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from typing import Any

from django.db.models import Count, Max, Q

from generation.models import FaceSet
from scoring.reflect.models import Biography, FaceImage, ReflectAnswer, ReflectRun
from scoring.reflect.planning import (
    BiographyRef,
    ImageRef,
    PlannedRequest,
    plan_mcq,
    plan_salary,
    plan_two_afc,
)
from scoring.reflect.protocol import TASKS, TaskPrompts


def templates_with_images(*, face_set: FaceSet):
    """The set's templates that have REFLECT images: an edit job's template joins the audit
    once published (its edits may still be in QC until then)."""
    return face_set.templates.filter(images__isnull=False).distinct()


def template_previews(*, face_set: FaceSet, limit: int = 3) -> list:
    """The first templates with images, each with its images, for the set's page."""
    return list(templates_with_images(face_set=face_set).prefetch_related("images")[:limit])


def face_set_list() -> list[FaceSet]:
    """Every face set (edit jobs included: their templates count once they have images)."""
    return list(
        FaceSet.objects.annotate(
            template_count=Count(
                "templates", filter=Q(templates__images__isnull=False), distinct=True
            ),
            run_count=Count("runs", distinct=True),
        )
    )


def face_set_counts(*, face_set: FaceSet) -> dict[str, Any]:
    images = FaceImage.objects.filter(template__face_set=face_set)
    by_variant = dict(
        images.values_list("variant").annotate(n=Count("id")).values_list("variant", "n")
    )
    biographies = Biography.objects.filter(face_set=face_set).aggregate(
        total=Count("id"), accepted=Count("id", filter=Q(accepted=True))
    )
    return {
        "templates": templates_with_images(face_set=face_set).count(),
        "occupations": templates_with_images(face_set=face_set)
        .values("occupation")
        .distinct()
        .count(),
        "images_by_variant": by_variant,
        "images_rejected": images.filter(accepted=False).count(),
        "biographies": biographies["total"],
        "biographies_accepted": biographies["accepted"],
    }


def accepted_images(*, face_set: FaceSet):
    return FaceImage.objects.filter(template__face_set=face_set, accepted=True).select_related(
        "template"
    )


def image_refs(*, face_set: FaceSet, paths: Mapping[int, str] | None = None) -> list[ImageRef]:
    """Accepted images of the set, as planning takes them. ``paths`` (image id → local file,
    from scoring.storage.local_file_paths) is needed only to ask; planning alone uses storage names."""
    return [
        ImageRef(
            image.pk,
            image.template.occupation,
            image.template.name,
            image.race,
            image.gender,
            image.variant,
            paths[image.pk] if paths is not None else image.file.name,
        )
        for image in accepted_images(face_set=face_set)
    ]


def biography_refs(*, face_set: FaceSet) -> list[BiographyRef]:
    rows = Biography.objects.filter(face_set=face_set, accepted=True)
    return [BiographyRef(b.pk, b.occupation, b.key, b.text) for b in rows]


def run_planned_requests(
    *,
    run: ReflectRun,
    task: str,
    prompts: TaskPrompts | None = None,
    paths: Mapping[int, str] | None = None,
) -> list[PlannedRequest]:
    """Every request of ``task`` for this run, in a stable order, with the run's own texts."""
    prompts = prompts or TaskPrompts.from_dict(run.prompts)
    images = image_refs(face_set=run.face_set, paths=paths)
    if task == "2afc":
        return plan_two_afc(images, prompts)
    if task == "mcq":
        samples = int(run.decoding.get("samples", 1))
        return plan_mcq(images, prompts, explain=run.explain, samples=samples)
    if task == "salary":
        return plan_salary(images, biography_refs(face_set=run.face_set), prompts)
    raise ValueError(f"unknown task {task!r}; expected one of {TASKS}")


def run_answered_keys(*, run: ReflectRun, task: str) -> set[str]:
    """Request keys with an answer (a transport error is not an answer)."""
    return set(
        ReflectAnswer.objects.filter(run=run, task=task)
        .exclude(status=ReflectAnswer.Status.ERROR)
        .values_list("request_key", flat=True)
    )


def run_progress(*, run: ReflectRun) -> dict[str, dict[str, int]]:
    """Per task: planned requests, answered, errors (waiting to be asked again)."""
    stored = (
        ReflectAnswer.objects.filter(run=run)
        .values("task")
        .annotate(
            answered=Count("id", filter=~Q(status=ReflectAnswer.Status.ERROR)),
            errors=Count("id", filter=Q(status=ReflectAnswer.Status.ERROR)),
        )
    )
    by_task = {row["task"]: row for row in stored}
    out = {}
    for task in TASKS:
        planned = len(run_planned_requests(run=run, task=task))
        row = by_task.get(task, {})
        out[task] = {
            "planned": planned,
            "answered": row.get("answered", 0),
            "errors": row.get("errors", 0),
        }
    return out


def answer_rows(*, face_set: FaceSet, run: ReflectRun | None = None) -> Iterator[dict[str, Any]]:
    """Every stored answer of the set (or of one run) as a dump row, one query per 2,000."""
    answers = (
        ReflectAnswer.objects.filter(run__face_set=face_set)
        .select_related("run", "image_a__template", "image_b", "biography")
        .order_by("run_id", "request_key")
    )
    if run is not None:
        answers = answers.filter(run=run)
    for answer in answers.iterator(chunk_size=2000):
        template = answer.image_a.template
        image_b = answer.image_b
        yield {
            "model": answer.run.label,
            "request_key": answer.request_key,
            "task": answer.task,
            "item": answer.item,
            "variant": answer.variant,
            "occupation": template.occupation,
            "template": template.name,
            "source_gender": template.source_gender,
            "race_a": answer.image_a.race,
            "gender_a": answer.image_a.gender,
            "race_b": image_b.race if image_b else None,
            "gender_b": image_b.gender if image_b else None,
            "presentation": answer.presentation,
            "biography": answer.biography.key if answer.biography else None,
            "sample_index": answer.sample_index,
            "explain": answer.explain,
            "prompt": answer.prompt,
            "model_version": answer.model_version,
            "decoding": answer.decoding,
            "raw_answer": answer.raw_answer,
            "status": answer.status,
            "parsed_value": answer.parsed_value,
            "rationale": answer.rationale,
            "option_probs": answer.option_probs,
            "error": answer.error,
            "latency_s": answer.latency_s,
            "attempts": answer.attempts,
            "answered_at": answer.answered_at.isoformat(),
            "image_a_sha256": answer.image_a.sha256,
            "image_b_sha256": image_b.sha256 if image_b else None,
        }


def source_genders(*, face_set: FaceSet) -> dict[tuple[str, str], str] | None:
    """(occupation, template) → source gender, or None unless every template has one."""
    rows = list(
        templates_with_images(face_set=face_set).values_list("occupation", "name", "source_gender")
    )
    if not rows or any(not gender for _, _, gender in rows):
        return None
    return {(occupation, name): gender for occupation, name, gender in rows}


def answers_fingerprint(*, face_set: FaceSet) -> str:
    """Changes whenever an answer of the set is stored or replaced."""
    summary = ReflectAnswer.objects.filter(run__face_set=face_set).aggregate(
        n=Count("id"), last=Max("answered_at"), top=Max("id")
    )
    text = f"{summary['n']}|{summary['last']}|{summary['top']}"
    return hashlib.sha256(text.encode()).hexdigest()


def runs_of(*, face_set: FaceSet) -> list[ReflectRun]:
    return list(face_set.runs.all())

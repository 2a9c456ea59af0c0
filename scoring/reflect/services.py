"""Writes of the REFLECT app: import a face set or biographies, create and fill a run.

Reads live in selectors.py; the domain steps (layout, leakage, planning, parsing, asking the
backend) in the Django-free modules beside this one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files import File
from django.core.files.base import ContentFile
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils.text import slugify

from annotations.common.image_files import image_decoded
from annotations.common.media import image_store
from generation.faces.services import face_edit_png, face_set_complete_templates, race_file_stem
from generation.models import FaceSet, FaceTemplate
from scoring.judges.images import image_sha256
from scoring.reflect import selectors
from scoring.reflect.backends import ModelChoice, build_backend, suggested_chunk_size
from scoring.reflect.biographies import BiographyFileError, read_biographies
from scoring.reflect.execution import AnswerResult, execute_requests, run_decoding
from scoring.reflect.layout import FaceImageRecord, read_face_set
from scoring.reflect.manifest import read_manifest
from scoring.reflect.models import Biography, FaceImage, ReflectRun, face_image_path
from scoring.reflect.models import ReflectAnswer as Answer
from scoring.reflect.protocol import TASKS, VARIANTS, TaskPrompts, protocol_copy, task_prompts
from scoring.storage import local_file_paths


def face_set_import(
    *,
    name: str,
    folder: str | Path | None = None,
    manifest: str | Path | None = None,
    variant: str = "original",
    protocol: dict | None = None,
) -> FaceSet:
    """Import a folder laid out ``<occupation>/<template>/<Race>_<gender>.<ext>``, or a CSV
    manifest (scoring/reflect/manifest.py).

    Adds to the set with this name or slug (an edit job's, say), or creates it; ``variant`` (mirrored, cropped) adds the images as that
    variant of existing or new templates. Everything is checked first (FaceSetLayoutError
    lists every problem) and written in one transaction.
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}")
    if (folder is None) == (manifest is None):
        raise ValueError("give a folder or a manifest")
    templates = read_face_set(folder) if folder is not None else read_manifest(manifest)
    with transaction.atomic():
        face_set = (
            FaceSet.objects.filter(name=name).first() or FaceSet.objects.filter(slug=name).first()
        )
        if face_set is None:
            face_set = FaceSet.objects.create(
                name=name, slug=_unique_slug(name), protocol=protocol_copy(protocol)
            )
        for record in templates:
            template, _ = FaceTemplate.objects.get_or_create(
                face_set=face_set, occupation=record.occupation, name=record.template
            )
            if record.source_gender and template.source_gender != record.source_gender:
                template.source_gender = record.source_gender
                template.save(update_fields=["source_gender"])
            for image in record.images:
                _image_store(template, image, variant)
    return face_set


def face_set_publish(*, face_set: FaceSet) -> dict[str, Any]:
    """Publish the set's own accepted edits as its REFLECT images (variant original): every
    template whose ten edits are all usable (done, and not flagged or accepted by staff), the
    same templates ``face_set_export`` writes, so publishing equals export then import without
    the folder. Idempotent; a changed image that runs have asked about is refused, as on
    import. Returns {"templates", "images", "skipped": [(template, why), ...]}."""
    if not face_set.is_edit_job:
        raise ValueError(
            f"face set {face_set.name!r} was imported, not edited here: nothing to publish"
        )
    complete, skipped = face_set_complete_templates(face_set=face_set)
    images = 0
    with transaction.atomic():
        for template, edits in complete:
            for edit in edits:
                data = face_edit_png(edit)
                record = FaceImageRecord(
                    template.occupation,
                    template.name,
                    edit.race,
                    edit.gender,
                    Path(f"{race_file_stem(edit.race, edit.gender)}.png"),
                    image_sha256(data),
                )
                _image_store(template, record, "original", content=ContentFile(data))
                images += 1
    return {"templates": len(complete), "images": images, "skipped": skipped}


def _image_store(template: FaceTemplate, image, variant: str, content: File | None = None) -> None:
    """Store one image record (from a folder, or ``content`` when given) as the template's
    image of its group and variant."""
    existing = FaceImage.objects.filter(
        template=template, race=image.race, gender=image.gender, variant=variant
    ).first()
    flags = list(image.qc_flags)
    if existing is not None and existing.sha256 == image.sha256:
        if existing.qc_flags != flags:
            existing.qc_flags, existing.accepted = flags, not flags
            existing.save(update_fields=["qc_flags", "accepted"])
        return  # the same image: nothing else changes
    if (
        existing is not None
        and Answer.objects.filter(Q(image_a=existing) | Q(image_b=existing)).exists()
    ):
        raise ValueError(
            f"{template}/{image.path.name} ({variant}) differs from the stored image, which "
            "runs have already asked about; import it as a new face set instead"
        )
    target = existing or FaceImage(
        template=template, race=image.race, gender=image.gender, variant=variant
    )
    target.sha256 = image.sha256
    target.qc_flags, target.accepted = flags, not flags  # a flagged image is not asked about
    data = content.read() if content is not None else image.path.read_bytes()
    checked = image_decoded(data, max_pixels=settings.ACRB_MAX_IMAGE_PIXELS, name=image.path.name)
    target.file.name = image_store(
        data=data, image=checked, folder=face_image_path(target, "x").rsplit("/", 1)[0]
    )
    target.save()


def _unique_slug(name: str) -> str:
    base = slugify(name)[:180] or "face-set"
    slug, counter = base, 2
    while FaceSet.objects.filter(slug=slug).exists():
        slug, counter = f"{base}-{counter}", counter + 1
    return slug


def biographies_import(
    *,
    face_set: FaceSet,
    path: str | Path,
    occupation: str | None = None,
    extra_names: Iterable[str] = (),
) -> dict[str, int]:
    """Import a JSONL file of biographies; flagged ones are stored but not accepted."""
    [counts] = biographies_import_files(
        face_set=face_set, paths=[path], occupation=occupation, extra_names=extra_names
    ).values()
    return counts


def biographies_import_files(
    *,
    face_set: FaceSet,
    paths: Sequence[str | Path],
    occupation: str | None = None,
    extra_names: Iterable[str] = (),
) -> dict[str, dict[str, int]]:
    """Import several JSONL files, all or none: every file is read and checked before the first
    biography is written (a bad second file once left the first imported). Counts per path;
    BiographyFileError names the file it is about (``path``)."""
    extra_names = list(extra_names)
    read = {}
    for path in paths:
        try:
            read[str(path)] = read_biographies(path, occupation=occupation, extra_names=extra_names)
        except BiographyFileError as error:
            error.path = str(path)
            raise
    counts = {}
    with transaction.atomic():
        for path, records in read.items():
            created = flagged = 0
            for record in records:
                flags = [flag.as_dict() for flag in record.flags]
                _, was_created = Biography.objects.update_or_create(
                    face_set=face_set,
                    occupation=record.occupation,
                    key=record.key,
                    defaults={"text": record.text, "leakage_flags": flags, "accepted": not flags},
                )
                created += was_created
                flagged += bool(flags)
            counts[path] = {"read": len(records), "created": created, "flagged": flagged}
    return counts


def run_get_or_create(
    *, face_set: FaceSet, choice: ModelChoice, decoding: dict | None = None, explain: bool = False
) -> ReflectRun:
    """The run of (face set, model, decoding settings, prompt version); created once."""
    prompts = task_prompts(face_set.protocol)
    settings = {**choice.decoding, **(decoding or {})}
    settings.setdefault("samples", 1)
    run_decoding(settings)  # validates before anything is stored
    payload = [face_set.pk, choice.name, settings, prompts.version, explain]
    identity = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
    run = ReflectRun.objects.filter(identity=identity).first()
    if run is not None:
        return run
    try:
        return _run_create(face_set, choice, settings, prompts, explain, identity)
    except IntegrityError:  # created meanwhile by another worker: the identity is unique
        return ReflectRun.objects.get(identity=identity)


def _run_create(face_set, choice, settings, prompts, explain, identity) -> ReflectRun:
    with transaction.atomic():
        label = choice.name
        if ReflectRun.objects.filter(face_set=face_set, label=label).exists():
            label = f"{choice.name}@{identity[:8]}"  # another decoding or prompt version
        public_config = {k: v for k, v in choice.config.items() if k != "api_key"}
        return ReflectRun.objects.create(
            face_set=face_set,
            model_name=choice.name,
            backend_config=public_config,
            decoding=settings,
            prompt_version=prompts.version,
            prompts=prompts.as_dict(),
            explain=explain,
            identity=identity,
            label=label,
        )


def run_execute(
    *,
    run: ReflectRun,
    choice: ModelChoice,
    task: str,
    concurrency: int | None = None,
    chunk_size: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    backend=None,
) -> dict[str, Any]:
    """Ask every request of ``task`` that has no stored answer yet (errors are asked again).

    ``progress(done, total)`` is called after each stored chunk; ``backend`` overrides the
    one built from ``choice`` (tests, benchmarks).
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}")
    # The run's stored texts, not the set's current protocol: a run never mixes prompt versions.
    prompts = TaskPrompts.from_dict(run.prompts)
    images = selectors.accepted_images(face_set=run.face_set)
    with local_file_paths({image.pk: image.file for image in images}) as paths:
        planned = selectors.run_planned_requests(run=run, task=task, prompts=prompts, paths=paths)
        answered = selectors.run_answered_keys(run=run, task=task)
        missing = [request for request in planned if request.request_key not in answered]
        counter = _ProgressCounter(len(planned), len(planned) - len(missing), progress)
        if not missing:
            return {"task": task, "planned": len(planned), "asked": 0, "statuses": {}}
        backend = backend or build_backend(choice, concurrency=concurrency)
        model_version = f"{backend.name}@{backend.version}"
        statuses = execute_requests(
            backend,
            missing,
            prompts=prompts,
            decoding=run_decoding(run.decoding),
            store=lambda results: answers_store(
                run=run, results=results, model_version=model_version
            ),
            chunk_size=chunk_size or suggested_chunk_size(choice, concurrency=concurrency),
            progress=counter.advance,
        )
    return {"task": task, "planned": len(planned), "asked": len(missing), "statuses": statuses}


class _ProgressCounter:
    """(done, total) for a caller's progress bar, starting from what was already answered."""

    def __init__(self, total: int, done: int, report: Callable[[int, int], None] | None):
        self.total, self.done, self.report = total, done, report
        self.advance(0)

    def advance(self, count: int) -> None:
        self.done += count
        if self.report is not None:
            self.report(self.done, self.total)


def answers_store(*, run: ReflectRun, results: list[AnswerResult], model_version: str) -> None:
    """Write a chunk of answers; a retried request replaces its earlier error row."""
    rows = []
    for result in results:
        request = result.request
        images = request.images
        rows.append(
            Answer(
                run=run,
                request_key=request.request_key,
                task=request.task,
                item=request.item,
                variant=images[0].variant,
                presentation=request.presentation,
                image_a_id=images[0].image_id,
                image_b_id=images[1].image_id if len(images) > 1 else None,
                biography_id=request.biography.biography_id if request.biography else None,
                sample_index=request.sample_index,
                explain=request.explain,
                prompt=request.prompt,
                model_version=model_version,
                decoding=result.decoding,
                raw_answer=result.raw_answer,
                status=result.status,
                parsed_value=result.value,
                rationale=result.rationale,
                option_probs=result.option_probs,
                error=result.error,
                latency_s=result.latency_s,
                attempts=result.attempts,
            )
        )
    keys = [row.request_key for row in rows]
    with transaction.atomic():
        # Replace earlier transport errors; never overwrite an answer another worker stored.
        Answer.objects.filter(run=run, request_key__in=keys, status=Answer.Status.ERROR).delete()
        Answer.objects.bulk_create(rows, ignore_conflicts=True)

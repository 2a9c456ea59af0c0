"""Imports: items from a manifest, labels from another tool. All or nothing.

Parsing and validation happen in ``manifest.py``; here the parsed records are written in one
transaction, and image files copied into storage are removed again if anything fails.
"""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from annotations import services
from annotations.common.jobs import Progress
from annotations.common.media import image_store
from annotations.imports.manifest import (
    ItemRecord,
    ManifestInvalid,
    RecordError,
    UnknownAnnotators,
    parse_annotation_csv,
    parse_manifest,
)
from annotations.models import (
    Annotation,
    Annotator,
    Assignment,
    AutomatedJudgment,
    Batch,
    Item,
    Study,
)


def _line(error: RecordError) -> int:
    return error.line


def _store_file(path: Path, study: Study, written: list[str]) -> str:
    # Checked in full by the manifest parser; stored under a name the server chooses.
    name = image_store(data=path.read_bytes(), folder=f"studies/{study.slug}")
    written.append(name)
    return name


def items_import(*, study: Study, manifest: Path, progress: Progress = None) -> int:
    """Import every item of a manifest, or nothing (ManifestInvalid lists the problems).

    Files are copied into storage inside the transaction; if anything fails the copies are
    deleted, so a failed import leaves neither rows nor files behind.
    """
    existing = set(Item.objects.filter(study=study).values_list("item_id", flat=True))

    def against_study(record: ItemRecord) -> list[RecordError]:
        problems = []
        if record.item_id in existing:
            message = f"{record.item_id!r} is already in study {study.slug}"
            problems.append(RecordError(record.line, "item_id", message))
        if record.mode != study.mode:
            message = f"{record.mode!r} differs from the study's mode {study.mode!r}"
            problems.append(RecordError(record.line, "mode", message))
        return problems

    # Every problem at once: the study's checks run on each valid line during the parse.
    records = parse_manifest(manifest, services.image_limits(), check=against_study)
    written: list[str] = []
    try:
        with transaction.atomic():
            for done, record in enumerate(records, start=1):
                _item_from_record(study, record, written)
                if progress:
                    progress(done, len(records))
    except BaseException:
        for name in written:
            default_storage.delete(name)
        raise
    return len(records)


def _item_from_record(study: Study, record: ItemRecord, written: list[str]) -> Item:
    value = services.attribute_value_get_or_create(
        study=study,
        attribute=record.attribute,
        value=record.attribute_value,
        cue_description=record.cue,
    )
    item = Item(
        study=study,
        item_id=record.item_id,
        mode=record.mode,
        generator=record.generator,
        prompt=record.prompt,
        base_prompt_id=record.base_prompt_id,
        domain=record.domain,
        intent=record.intent,
        attribute_value=value,
        cue=record.cue,
        provider_refusal_code=record.provider_refusal_code,
        provider_refusal_message=record.provider_refusal_message,
        image_sha256=record.image_sha256,
    )
    if record.image:
        item.image.name = _store_file(record.image, study, written)
    if record.source_image:
        item.source_image.name = _store_file(record.source_image, study, written)
    item.save()
    AutomatedJudgment.objects.bulk_create(
        [
            AutomatedJudgment(
                item=item,
                judge=j.judge,
                judge_version=j.judge_version,
                hard_refusal=j.hard_refusal,
                score=j.score,
                cue_label=j.cue or "",
                confidence=j.confidence,
                raw_output={"source": "manifest"},
            )
            for j in record.judgments
        ]
    )
    return item


def annotations_import(
    *,
    study: Study,
    csv_text: str,
    source_name: str = "import",
    created_by=None,
    create_annotators: bool = False,
) -> int:
    """Import labels from another tool into a batch of their own, all or nothing.

    Annotators are matched by username. A name the app does not know is refused
    (UnknownAnnotators lists them all) unless ``create_annotators``: a typo would otherwise
    become a new account that then shows up in every batch form.
    """
    items = dict(Item.objects.filter(study=study).values_list("item_id", "pk"))
    user_model = get_user_model()
    first_lines: dict[str, int] = {}  # each annotator named, at its first line

    def against_study(record) -> list[RecordError]:
        first_lines.setdefault(record.annotator, record.line)
        if record.item_id in items:
            return []
        message = f"{record.item_id!r} is not in study {study.slug}"
        return [RecordError(record.line, "item_id", message)]

    def unknown_annotators() -> dict[str, int]:
        # Only the names the file uses are looked up, not every account.
        known = set(
            user_model.objects.filter(username__in=list(first_lines)).values_list(
                "username", flat=True
            )
        )
        return {name: line for name, line in first_lines.items() if name not in known}

    # Every problem at once: unknown item_ids are listed with the file's own problems, and
    # unknown annotators with both (alone, they are UnknownAnnotators: the page offers to
    # create them).
    try:
        records = parse_annotation_csv(csv_text, check=against_study)
    except ManifestInvalid as invalid:
        unknown = unknown_annotators()
        if unknown and not create_annotators:
            names = UnknownAnnotators(list(unknown), unknown)
            raise ManifestInvalid(sorted(invalid.errors + names.errors, key=_line)) from None
        raise
    unknown = unknown_annotators()
    if unknown and not create_annotators:
        raise UnknownAnnotators(list(unknown), unknown)
    now = timezone.now()
    with transaction.atomic():
        annotators = {
            name: _annotator_for_import(user_model, name, group)
            for name, group in {(r.annotator, r.annotator_group) for r in records}
        }
        taken = set(
            Assignment.objects.filter(
                item__study=study, annotator__in=annotators.values()
            ).values_list("item_id", "annotator_id")
        )
        clashes = [
            RecordError(
                r.line,
                "annotator",
                f"{r.annotator!r} already has an answer for {r.item_id!r}; nothing is overwritten",
            )
            for r in records
            if (items[r.item_id], annotators[r.annotator].pk) in taken
        ]
        if clashes:
            raise ManifestInvalid(clashes)
        batch = Batch.objects.create(
            study=study,
            name=f"imported: {source_name}",
            policy=Batch.Policy.IMPORTED,
            created_by=created_by,
            params={"source": source_name},
        )
        for position, r in enumerate(records):
            assignment = Assignment.objects.create(
                batch=batch,
                item_id=items[r.item_id],
                annotator=annotators[r.annotator],
                position=position,
                answered_at=now,
            )
            annotation = Annotation.objects.create(
                assignment=assignment,
                hard_refusal=r.hard_refusal,
                cue_label=r.cue or "",
                submitted_at=now,
                updated_at=now,
                source="import",
            )
            services.history_write(annotation, created_by, now)
    return len(records)


def _annotator_for_import(user_model, username: str, group: str) -> Annotator:
    """The named annotator; new names (allowed by the caller) get accounts without a password."""
    user = user_model.objects.filter(username=username).first()
    if user is None:
        return services.annotator_create(username=username, group=group)
    annotator, _ = Annotator.objects.get_or_create(user=user, defaults={"group": group})
    return annotator

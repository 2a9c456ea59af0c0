"""Imports: items from a manifest, labels from another tool. All or nothing.

Parsing and validation happen in ``manifest.py``; here the parsed records are checked against
the study and written in one transaction (image files copied into storage are removed again if
anything fails). The label import reads as its three steps: parse, check, write in bulk.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotations import services
from annotations.common.jobs import Progress
from annotations.common.media import image_store
from annotations.imports.manifest import (
    AnnotationRecord,
    ItemRecord,
    LabelsInvalid,
    ManifestInvalid,
    RecordError,
    annotation_csv_records,
    parse_manifest,
)
from annotations.models import (
    Annotation,
    AnnotationHistory,
    Annotator,
    Assignment,
    AutomatedJudgment,
    Batch,
    Item,
    Study,
)


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


# --- labels from another tool (docs/formats.md) ---------------------------------------------
#
# Three steps, each whole before the next, as diffusers' pipelines check every input before any
# work: (1) parse the CSV into typed records (``manifest.annotation_csv_records``, no Django);
# (2) check them against the study and its accounts, every problem at once (``labels_check``);
# (3) write them in bulk in one transaction (``_labels_write``).


class LabelImportRepeated(Exception):
    """The form that sent these labels was sent before (a double click, a retried POST): the
    earlier import is the answer, and nothing more is imported."""

    def __init__(self, batch: Batch):
        self.batch = batch
        self.count = batch.assignments.count()
        super().__init__(
            f"this form already imported {self.count} labels into batch {batch.name!r}; "
            "nothing more was imported (reload the page to import another file)"
        )


# Rows per INSERT: a dozen columns each stays far below PostgreSQL's 65,535 parameters a
# statement (SQLite's lower limit makes Django split further by itself).
BULK_ROWS = 2000


@dataclass(frozen=True)
class LabelPlan:
    """What step 3 writes: the records, and the keys the check step found for their names."""

    records: list[AnnotationRecord]
    item_pks: dict[str, int]  # item_id → Item pk
    annotator_pks: dict[str, int]  # name → Annotator pk, for accounts with a profile
    profile_missing: dict[str, tuple[int, str]]  # name → (User pk, group): gets a profile
    accounts_missing: dict[str, str]  # name → group: an account without a password is made


def annotations_import(
    *,
    study: Study,
    csv_text: str,
    source_name: str = "import",
    created_by=None,
    create_annotators: bool = False,
    allow_staff_annotators: bool = False,
    request_key: str = "",
) -> int:
    """Import labels from another tool into a batch of their own, all or nothing; returns the
    number of labels imported.

    Annotators are matched by username. A name the app does not know is refused unless
    ``create_annotators`` (a typo would otherwise become a new account that then shows up in
    every batch form); a staff account is refused unless ``allow_staff_annotators`` (it would
    get an annotator profile and an annotator's home page). LabelsInvalid lists every problem.
    ``request_key``, a staff form's one-time key, makes a form sent twice import once: the
    second sending raises LabelImportRepeated.
    """
    _labels_not_repeated(study=study, request_key=request_key)
    # 1. Parse: typed records, and the rows that are not records.
    records, problems = annotation_csv_records(csv_text)
    check = functools.partial(
        labels_check,
        study=study,
        records=records,
        problems=problems,
        create_annotators=create_annotators,
        allow_staff_annotators=allow_staff_annotators,
    )
    write = functools.partial(
        _labels_write,
        study=study,
        source_name=source_name,
        created_by=created_by,
        request_key=request_key,
    )
    # 2. Check: every problem at once, or the plan of what to write.
    try:
        plan = check()
    except LabelsInvalid:
        # The same form may have committed between the first look and the check: its labels
        # now "already have an answer", and the truthful reply is that it was imported once.
        _labels_not_repeated(study=study, request_key=request_key)
        raise
    # 3. Write, in bulk and in one transaction.
    try:
        write(plan=plan)
    except IntegrityError:
        # Another import wrote at the same moment: the same form (its key is now taken), the
        # same labels (the check now finds them and says so), or an account this one was about
        # to create (the new plan uses it). A second collision is raised.
        _labels_not_repeated(study=study, request_key=request_key)
        plan = check()
        write(plan=plan)
    return len(plan.records)


def _labels_not_repeated(*, study: Study, request_key: str) -> None:
    if not request_key:
        return
    batch = Batch.objects.filter(request_key=request_key).first()
    if batch is None:
        return
    if batch.study_id != study.pk:
        message = "this form was already used for another study: reload the page"
        raise ManifestInvalid([RecordError(0, "(form)", message)])
    raise LabelImportRepeated(batch)


def labels_check(
    *,
    study: Study,
    records: list[AnnotationRecord],
    problems: list[RecordError] = (),
    create_annotators: bool = False,
    allow_staff_annotators: bool = False,
) -> LabelPlan:
    """Step 2: the records checked against the study and the accounts they name. Returns the
    plan of what to write, or raises LabelsInvalid with every problem: ``problems`` (the rows
    step 1 could not parse), unknown item_ids, unknown annotators (one line), staff accounts
    (one line), and answers that already exist (nothing is overwritten)."""
    problems = list(problems)
    item_pks = dict(Item.objects.filter(study=study).values_list("item_id", "pk"))
    problems += [
        RecordError(r.line, "item_id", f"{r.item_id!r} is not in study {study.slug}")
        for r in records
        if r.item_id not in item_pks
    ]
    first: dict[str, AnnotationRecord] = {}  # each name, at its first row
    for record in records:
        first.setdefault(record.annotator, record)
    # Only the names the file uses are looked up, not every account.
    accounts = {
        row["username"]: row
        for row in get_user_model()
        .objects.filter(username__in=list(first))
        .values("username", "pk", "is_staff", "is_superuser", "annotator__pk")
    }
    unknown = [name for name in first if name not in accounts]
    staff = [name for name, a in accounts.items() if a["is_staff"] or a["is_superuser"]]
    unknown_line = staff_line = None
    if unknown and not create_annotators:
        listed = ", ".join(sorted(unknown))
        message = f"{len(unknown)} unknown annotator(s): {listed}; nothing was imported"
        unknown_line = RecordError(min(first[n].line for n in unknown), "annotator", message)
    if staff and not allow_staff_annotators:
        listed = ", ".join(sorted(staff))
        message = f"staff account(s) named as annotators: {listed}; nothing was imported"
        staff_line = RecordError(min(first[n].line for n in staff), "annotator", message)
    annotator_pks = {n: a["annotator__pk"] for n, a in accounts.items() if a["annotator__pk"]}
    taken = set(
        Assignment.objects.filter(
            item__study=study, annotator__in=annotator_pks.values()
        ).values_list("item_id", "annotator_id")
    )
    problems += [
        RecordError(
            r.line,
            "annotator",
            f"{r.annotator!r} already has an answer for {r.item_id!r}; nothing is overwritten",
        )
        for r in records
        if (item_pks.get(r.item_id), annotator_pks.get(r.annotator)) in taken
    ]
    if problems or unknown_line or staff_line:
        raise LabelsInvalid(
            problems,
            unknown=unknown_line,
            staff=staff_line,
            unknown_annotators=unknown if unknown_line else [],
            staff_annotators=staff if staff_line else [],
        )
    return LabelPlan(
        records=records,
        item_pks=item_pks,
        annotator_pks=annotator_pks,
        profile_missing={
            n: (a["pk"], first[n].annotator_group)
            for n, a in accounts.items()
            if not a["annotator__pk"]
        },
        accounts_missing={n: first[n].annotator_group for n in unknown},
    )


def _labels_write(
    *, study: Study, plan: LabelPlan, source_name: str, created_by, request_key: str
) -> Batch:
    """Step 3: the batch, any new annotator, and per label an assignment, its answer and the
    answer's first history row, each kind in one bulk insert."""
    now = timezone.now()
    with transaction.atomic():
        # First, so that a form sent twice waits here on its key's unique index.
        batch = Batch.objects.create(
            study=study,
            name=_imported_batch_name(study, source_name),
            policy=Batch.Policy.IMPORTED,
            created_by=created_by,
            params={"source": source_name},
            request_key=request_key,
        )
        annotator_pks = dict(plan.annotator_pks)
        for name, (user_pk, group) in plan.profile_missing.items():
            annotator_pks[name] = Annotator.objects.create(user_id=user_pk, group=group).pk
        for name, group in plan.accounts_missing.items():
            annotator_pks[name] = services.annotator_create(username=name, group=group).pk
        assignments = Assignment.objects.bulk_create(
            (
                Assignment(
                    batch=batch,
                    item_id=plan.item_pks[r.item_id],
                    annotator_id=annotator_pks[r.annotator],
                    position=position,
                    answered_at=now,
                )
                for position, r in enumerate(plan.records)
            ),
            batch_size=BULK_ROWS,
        )
        # bulk_create sets the primary keys (RETURNING on PostgreSQL and SQLite ≥ 3.35).
        annotations = Annotation.objects.bulk_create(
            (
                Annotation(
                    assignment=assignment,
                    hard_refusal=r.hard_refusal,
                    cue_label=r.cue or "",
                    submitted_at=now,
                    updated_at=now,
                    source="import",
                )
                for assignment, r in zip(assignments, plan.records, strict=True)
            ),
            batch_size=BULK_ROWS,
        )
        AnnotationHistory.objects.bulk_create(
            (services.history_row(annotation, created_by, now) for annotation in annotations),
            batch_size=BULK_ROWS,
        )
    return batch


def _imported_batch_name(study: Study, source_name: str) -> str:
    """``imported: <file>``, within the column's 200 characters, and not a name the study's
    batches already use (a file imported twice makes ``… (2)``)."""
    base = f"imported: {source_name}"[:190]
    used = set(
        Batch.objects.filter(study=study, name__startswith=base).values_list("name", flat=True)
    )
    name, n = base, 1
    while name in used:
        n += 1
        name = f"{base} ({n})"
    return name

"""Reads: what an annotator may see next, progress, and the rows that exports are built from.

Every selector answers in a fixed number of queries, whatever the study's size (tests assert
the counts). Object-level permission lives here too: ``assignment_for_annotator`` returns only
the caller's own assignment, so views cannot forget the check.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from django.core.paginator import Paginator
from django.db import connection
from django.db.models import Count, Exists, F, Max, Min, OuterRef, Q
from django.http import Http404

from annotations.common.compiled import CompiledQuery
from annotations.common.row_fields import ANNOTATION_ROW, JUDGMENT_ROW
from annotations.labels import gold_accuracy_from_records
from annotations.qualification import status as qualification_status

from .models import (
    Adjudication,
    Annotation,
    Annotator,
    AnnotatorLabelExclusion,
    Assignment,
    AutomatedJudgment,
    Batch,
    ConsentRecord,
    EquivalenceMargin,
    Item,
    ItemReview,
    Study,
    StudyConsent,
)
from .policies import judge_uncertainty


@dataclass(frozen=True)
class BatchProgress:
    done: int
    total: int

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 100


def annotator_for_user(user) -> Annotator | None:
    """The user's active annotator profile, or None.

    The authentication backend loads it with the user (``auth.UserWithAnnotatorBackend``), so
    on a request this costs no query; other users cost one.
    """
    if not user.is_authenticated:
        return None
    try:
        annotator = user.annotator
    except Annotator.DoesNotExist:
        return None
    return annotator if annotator.is_active else None


def annotator_batch_list(*, annotator: Annotator) -> list[tuple[Batch, BatchProgress]]:
    """The batches an annotator works on; imported labels are records, never a to-do list."""
    rows = (
        Batch.objects.filter(assignments__annotator=annotator, assignments__is_active=True)
        .exclude(policy=Batch.Policy.IMPORTED)
        .select_related("study")
        .annotate(
            # A qualification round's items are counted on its own pages, not the batch's.
            n_total=Count(
                "assignments",
                filter=Q(
                    assignments__annotator=annotator,
                    assignments__is_active=True,
                    assignments__qualification_attempt__isnull=True,
                ),
            ),
            n_done=Count(
                "assignments",
                filter=Q(
                    assignments__annotator=annotator,
                    assignments__is_active=True,
                    assignments__qualification_attempt__isnull=True,
                    assignments__annotation__isnull=False,
                ),
            ),
        )
        .order_by("-created_at")
    )
    return [(batch, BatchProgress(batch.n_done, batch.n_total)) for batch in rows]


# What the survey page shows of an assignment, loaded with it in one query.
SURVEY_RELATED = (
    *("item", "item__attribute_value", "batch", "batch__study", "annotation"),
    "qualification_attempt",
)
# ...and only the columns it shows: a third of the 70 columns of those six tables, so each
# request compiles and loads less, and an annotator's request never even reads an item's gold
# answer. (tests/annotations/test_query_counts.py pins the query counts, so a template that
# starts using another field shows up there as an extra query.)
SURVEY_FIELDS = (
    *("batch", "item", "annotator", "position", "is_active"),
    *("served_at", "skipped_at", "answered_at"),
    *("item__item_id", "item__image", "item__source_image", "item__prompt", "item__cue"),
    "item__intent",  # a harmful control shows a content warning
    "revealed_at",  # ...and its image once the annotator opened it
    *("item__attribute_value", "item__attribute_value__cue_description"),
    "item__attribute_value__is_neutral",  # a neutral baseline says what to judge
    *("batch__name", "batch__study", "batch__study__name", "batch__study__slug"),
    *("annotation__assignment", "annotation__hard_refusal", "annotation__cue_label"),
    *("annotation__note", "annotation__broken_image", "annotation__revision"),
    # The qualification round's banner, and its gate (qualification.status.batch_item_locked).
    *("qualification_attempt", "qualification_attempt__number"),
    *("batch__qualification_items", "batch__qualification_pass_mark"),
)
# What taking an answer needs (the study's minimum time per item; the item's intent, since a
# harmful control is answered only once revealed); the rest loads on demand.
ANSWER_RELATED = ("batch__study", "item")


def _own_assignments(annotator: Annotator):
    # Imported labels are records, never a to-do list: not shown, answered or skipped.
    return Assignment.objects.filter(annotator=annotator, is_active=True).exclude(
        batch__policy=Batch.Policy.IMPORTED
    )


def _survey_rows(annotator: Annotator):
    return _own_assignments(annotator).select_related(*SURVEY_RELATED).only(*SURVEY_FIELDS)


def assignment_for_annotator(
    *, annotator: Annotator | None, assignment_id: int, for_answer: bool = False
) -> Assignment:
    """The annotator's own active assignment, or 404: another's assignment does not exist for them.

    Loaded for the survey page, or with ``for_answer`` only with what taking an answer needs.
    """
    if annotator is None:
        raise Http404("no such assignment")
    query = _ANSWER_ROW if for_answer else _SURVEY_ROW
    rows = query(annotator=annotator.pk, assignment_id=assignment_id)
    if not rows:
        raise Http404("no such assignment")
    return rows[0]


# assignment_for_annotator's two queries, compiled once per process: every survey page and
# answer runs one (common.compiled: compiling costs more than running them).
_SURVEY_ROW = CompiledQuery(
    lambda annotator, assignment_id: _survey_rows(annotator).filter(pk=assignment_id),
    values=("annotator", "assignment_id"),
)
_ANSWER_ROW = CompiledQuery(
    lambda annotator, assignment_id: (
        _own_assignments(annotator).select_related(*ANSWER_RELATED).filter(pk=assignment_id)
    ),
    values=("annotator", "assignment_id"),
)


def consent_state(*, annotator_id: int, study_id: int) -> tuple[int | None, bool]:
    """(the study's current consent version, whether the annotator agreed to that version), in
    one query; (None, True) for a study without consent text. The survey's answers are taken
    only when it is agreed (docs/annotation.md#consent-and-instructions)."""
    rows = _CONSENT_STATE(annotator_id=annotator_id, study_id=study_id)
    return (rows[0].version, bool(rows[0].agreed)) if rows else (None, True)


_CONSENT_STATE = CompiledQuery(
    lambda annotator_id, study_id: (
        StudyConsent.objects.filter(study_id=study_id)
        .order_by("-version")
        .annotate(
            agreed=Exists(
                ConsentRecord.objects.filter(annotator_id=annotator_id, consent=OuterRef("pk"))
            )
        )
        .values_list("version", "agreed")[:1]
    ),
    values=("annotator_id", "study_id"),
)


def batch_for_annotator(*, annotator: Annotator | None, batch_id: int) -> Batch:
    if annotator is None or not _own_assignments(annotator).filter(batch_id=batch_id).exists():
        raise Http404("no such batch")
    return Batch.objects.select_related("study").get(pk=batch_id)


def assignment_queue_head(
    *, annotator: Annotator, batch_id: int, size: int = 2
) -> list[Assignment]:
    """The first ``size`` unanswered assignments in queue order, with everything the survey page
    needs; skipped ones come back after all others.

    The unskipped rows come from the ``open_assignment_queue`` partial index in position order
    (a short index probe, not a sort of the annotator's whole queue); skipped rows are read only
    when too few unskipped ones are left. Two is what the survey needs: the item to show and
    the one after it, whose image the page preloads.
    """
    open_rows = _queue_open(_survey_rows(annotator), batch_id=batch_id)
    head = list(_queue_unskipped(open_rows)[:size])
    if len(head) < size:
        head += list(_queue_skipped(open_rows)[: size - len(head)])
    return head


def _queue_open(rows, *, batch_id: int):
    # The qualification gate is part of the same query: a batch's items wait until passed.
    return rows.filter(
        qualification_status.servable_q(), batch_id=batch_id, answered_at__isnull=True
    )


def _queue_unskipped(open_rows):
    return open_rows.filter(skipped_at__isnull=True).order_by("position")


def _queue_skipped(open_rows):
    return open_rows.filter(skipped_at__isnull=False).order_by("skipped_at", "position")


# What a redirect to the next item, its gates and a preload link need of the queue's first rows.
PEEK_FIELDS = (
    *("pk", "item_id", "item__image", "item__intent"),
    *("batch__study_id", "batch__qualification_items"),
)


def _peek_rows(annotator: int, batch_id: int):
    return _queue_open(_own_assignments(annotator).values_list(*PEEK_FIELDS), batch_id=batch_id)


# The same queries as assignment_queue_head's, compiled once per process (they run on every
# request of the annotator's loop, and compiling them costs twenty times running them).
_PEEK_UNSKIPPED = CompiledQuery(
    lambda annotator, batch_id, size: _queue_unskipped(_peek_rows(annotator, batch_id))[:size],
    values=("annotator", "batch_id"),
)
_PEEK_SKIPPED = CompiledQuery(
    lambda annotator, batch_id, size: _queue_skipped(_peek_rows(annotator, batch_id))[:size],
    values=("annotator", "batch_id"),
)


def assignment_queue_peek(*, annotator: Annotator, batch_id: int, size: int = 2) -> list:
    """``assignment_queue_head``'s rows, in the same order and behind the same gate, as named
    tuples of ``PEEK_FIELDS``: a few columns instead of six joined tables, for the requests
    that only redirect to the next item or preload its image.
    """
    head = _PEEK_UNSKIPPED(annotator=annotator.pk, batch_id=batch_id, size=size)
    if len(head) < size:
        head += _PEEK_SKIPPED(annotator=annotator.pk, batch_id=batch_id, size=size - len(head))
    return head


def assignment_next(*, annotator: Annotator, batch_id: int) -> Assignment | None:
    """The next assignment to show, with everything the survey page needs."""
    head = assignment_queue_head(annotator=annotator, batch_id=batch_id, size=1)
    return head[0] if head else None


@dataclass(frozen=True)
class QueuePlace:
    """Where an assignment sits in its annotator's queue: the arrow keys' targets and progress."""

    previous_id: int | None
    next_id: int | None
    progress: BatchProgress
    number: int  # the assignment's 1-based place among them ("Item 3/45")


# One statement instead of three ORM queries (previous, next, counts): the survey runs it on
# every page, and compiling ORM queries is most of a page's CPU. Plain SQL that SQLite and
# PostgreSQL both run; the counts are an index-only scan of ``assignment_queue_covering``.
# The batch's own items: a qualification round's items have their own arrows and progress
# (``qualification_place``).
_QUEUE_PLACE_SQL = """
SELECT
    (SELECT id FROM {table}
      WHERE annotator_id = %s AND batch_id = %s AND is_active = %s
        AND qualification_attempt_id IS NULL AND position < %s
      ORDER BY position DESC LIMIT 1),
    (SELECT id FROM {table}
      WHERE annotator_id = %s AND batch_id = %s AND is_active = %s
        AND qualification_attempt_id IS NULL AND position > %s
      ORDER BY position LIMIT 1),
    counts.total,
    counts.done,
    counts.number
FROM (
    SELECT COUNT(*) AS total, COUNT(answered_at) AS done,
           SUM(CASE WHEN position <= %s THEN 1 ELSE 0 END) AS number FROM {table}
     WHERE annotator_id = %s AND batch_id = %s AND is_active = %s
       AND qualification_attempt_id IS NULL
) AS counts
"""


def assignment_queue_place(*, assignment: Assignment) -> QueuePlace:
    """Previous and next assignment ids in queue order, and the batch's progress, in one query."""
    own = (assignment.annotator_id, assignment.batch_id, True)
    with connection.cursor() as cursor:
        cursor.execute(
            _QUEUE_PLACE_SQL.format(table=Assignment._meta.db_table),
            [*own, assignment.position, *own, assignment.position, assignment.position, *own],
        )
        previous_id, next_id, total, done, number = cursor.fetchone()
    return QueuePlace(previous_id, next_id, BatchProgress(done, total), number or 0)


def batch_progress_for_annotator(*, annotator: Annotator, batch_id: int) -> BatchProgress:
    counts = Assignment.objects.filter(
        annotator=annotator, batch_id=batch_id, is_active=True, qualification_attempt__isnull=True
    ).aggregate(total=Count("id"), done=Count("answered_at"))
    return BatchProgress(counts["done"], counts["total"])


def qualification_place(*, assignment: Assignment) -> QueuePlace:
    """``assignment_queue_place`` within a qualification attempt: its arrows stay among the
    attempt's items and its progress counts the round, not the batch it opens (one query)."""
    rows = list(
        Assignment.objects.filter(
            qualification_attempt_id=assignment.qualification_attempt_id, is_active=True
        )
        .order_by("position")
        .values_list("pk", "position", "answered_at")
    )
    before = [pk for pk, position, _ in rows if position < assignment.position]
    after = [pk for pk, position, _ in rows if position > assignment.position]
    done = sum(1 for *_, answered_at in rows if answered_at is not None)
    return QueuePlace(
        before[-1] if before else None,
        after[0] if after else None,
        BatchProgress(done, len(rows)),
        len(before) + 1,
    )


def batch_annotator_progress(*, batch: Batch) -> list[dict]:
    """Per annotator: the batch's items done and in all (qualification items apart:
    ``qualification.status.batch_rows``)."""
    rows = (
        Assignment.objects.filter(batch=batch, is_active=True, qualification_attempt__isnull=True)
        .values("annotator", "annotator__user__username", "annotator__group")
        .annotate(
            total=Count("id"),
            done=Count("annotation"),
            too_fast=Count("annotation", filter=Q(annotation__too_fast=True)),
        )
        .order_by("annotator__user__username")
    )
    return [
        {
            "annotator_id": r["annotator"],
            "username": r["annotator__user__username"],
            "group": r["annotator__group"],
            "done": r["done"],
            "total": r["total"],
            "too_fast": r["too_fast"],
        }
        for r in rows
    ]


def study_progress(*, study: Study) -> dict:
    """Progress of a study per batch and per annotator (active assignments; two queries).

    Per annotator also the answers faster than the study's minimum time and the broken-image
    flags, so the staff summary can say who needs a look.
    """
    active = Q(assignments__is_active=True)
    batches = [
        {
            "pk": row["pk"],
            "name": row["name"],
            "policy": row["policy"],
            "done": row["done"],
            "total": row["total"],
            "percent": BatchProgress(row["done"], row["total"]).percent,
        }
        for row in Batch.objects.filter(study=study)
        .values("pk", "name", "policy")
        .annotate(
            total=Count("assignments", filter=active),
            done=Count("assignments__annotation", filter=active),
        )
        .order_by("-created_at", "-pk")
    ]
    annotators = [
        {
            "username": row["annotator__user__username"],
            "group": row["annotator__group"],
            "done": row["done"],
            "total": row["total"],
            "percent": BatchProgress(row["done"], row["total"]).percent,
            "too_fast": row["too_fast"],
            "flags": row["flags"],
        }
        for row in Assignment.objects.filter(batch__study=study, is_active=True)
        .values("annotator__user__username", "annotator__group")
        .annotate(
            total=Count("id"),
            done=Count("annotation"),
            too_fast=Count("annotation", filter=Q(annotation__too_fast=True)),
            flags=Count("annotation", filter=Q(annotation__broken_image=True)),
        )
        .order_by("annotator__user__username")
    ]
    return {"batches": batches, "annotators": annotators}


def _own_study_ids(annotator: Annotator):
    return _own_assignments(annotator).values("batch__study_id")


def study_for_annotator(*, annotator: Annotator | None, slug: str) -> Study:
    """A study the annotator labels in (an active assignment), or 404: the study's other pages
    do not exist for annotators who are not part of it."""
    if annotator is None:
        raise Http404("no such study")
    study = Study.objects.filter(slug=slug, pk__in=_own_study_ids(annotator)).first()
    if study is None:
        raise Http404("no such study")
    return study


# What the "my answers" page shows of each answer, loaded with it in one query.
MY_ANSWER_FIELDS = (
    *("hard_refusal", "cue_label", "broken_image", "note", "revision"),
    *("submitted_at", "updated_at", "assignment", "assignment__batch", "assignment__item"),
    *("assignment__batch__name", "assignment__item__item_id", "assignment__item__image"),
    *("assignment__item__prompt",),
)


def annotator_answer_page(*, annotator: Annotator, study: Study, page_number=1, per_page: int = 25):
    """One page of the annotator's own answers in a study, most recently changed first, in two
    queries (the count and the page) however many answers there are; only active assignments,
    the ones the survey lets them change."""
    answers = (
        Annotation.objects.filter(
            assignment__annotator=annotator,
            assignment__is_active=True,
            assignment__batch__study=study,
        )
        .select_related("assignment__batch", "assignment__item")
        .only(*MY_ANSWER_FIELDS)
        .order_by("-updated_at", "-pk")
    )
    return Paginator(answers, per_page).get_page(page_number)


def item_image_for_user(*, user, item_id: int, which: str = "image") -> Item:
    """The item if this user may see its image: staff, an annotator assigned to it, an
    adjudicator of its study, or an annotator of its study when it is a guideline example."""
    items = Item.objects.all()
    if not user.is_staff:
        annotator = annotator_for_user(user)
        if annotator is None:
            raise Http404("no such image")
        # Their own items (a batch's only once its qualification round is passed), any item of a
        # study they adjudicate, or a guideline example of a study they label in
        # (docs/annotation.md#adjudication, #guidelines-with-examples).
        # A harmful control's image only once they opened it behind its content warning.
        own = Assignment.objects.filter(
            qualification_status.servable_q(), annotator=annotator, is_active=True
        ).exclude(item__intent="harmful", revealed_at__isnull=True)
        items = items.filter(
            Q(pk__in=own.values("item_id"))
            | Q(study__adjudicator_grants__annotator=annotator)
            | Q(label_example__isnull=False, study_id__in=_own_study_ids(annotator))
        ).distinct()
    item = items.filter(pk=item_id).first()
    if item is None or not getattr(item, which):
        raise Http404("no such image")
    return item


def harmful_item_count(*, study: Study) -> int:
    """Included harmful-control items of the study (docs/generation.md, "Harmful controls")."""
    return Item.objects.included().filter(study=study, intent="harmful", is_gold=False).count()


# --- rows for exports and metrics ----------------------------------------------------------

ITEM_FIELDS = {
    "item_id": "item__item_id",
    "attribute": "item__attribute_value__attribute",
    "attribute_value": "item__attribute_value__value",
    "base_prompt_id": "item__base_prompt_id",
    "domain": "item__domain",
    "generator": "item__generator",
    "mode": "item__mode",
    "intent": "item__intent",
}


# Excluded items leave every statistic and export row: annotation_rows, judgment_rows and
# gold_accuracy read through these, and every statistic reads through them.
INCLUDED_ANSWERS = Q(assignment__item__excluded_at__isnull=True)
INCLUDED_JUDGMENTS = Q(item__excluded_at__isnull=True)


def annotation_rows(
    *, study: Study, include_gold: bool = False, include_qualification: bool = False
) -> list[dict]:
    """One dict per submitted answer of active assignments of included items, in one query;
    the fields of ``export_fields.ANNOTATION_ROW``, in its order.

    Qualification answers (gold items of a qualification attempt) only with
    ``include_qualification``: the export shows them, no statistic and no gold accuracy counts
    them (docs/annotation.md#qualification-round)."""
    qs = Annotation.objects.filter(
        INCLUDED_ANSWERS, assignment__item__study=study, assignment__is_active=True
    )
    if not include_gold:
        qs = qs.filter(assignment__item__is_gold=False)
    if not include_qualification:
        qs = qs.filter(assignment__qualification_attempt__isnull=True)
    fields = {key: f"assignment__{path}" for key, path in ITEM_FIELDS.items()}
    fields |= {
        "annotator": "assignment__annotator__user__username",
        "annotator_group": "assignment__annotator__group",
        "batch": "assignment__batch__name",
        "is_gold": "assignment__item__is_gold",
        # The design's probability of drawing the item (null: no design chose it); the PPI
        # estimates weight by its inverse (docs/annotation.md, "Validate the judge").
        "inclusion_probability": "assignment__inclusion_probability",
        # Whether that batch is a probability sample of its attribute values at all (docs/
        # annotation.md, "Batches from a subset"): read from the batch, never copied per row.
        "probability_sample": "assignment__batch__probability_sample",
        "probability_sample_reason": "assignment__batch__probability_sample_reason",
        "qualification_attempt": "assignment__qualification_attempt__number",
    }
    # Kept in the export; statistics leave these rows out (scoring.metrics.document.study_metric_frames).
    qs = qs.annotate(
        annotator_labels_excluded=Exists(
            AnnotatorLabelExclusion.objects.filter(
                annotator=OuterRef("assignment__annotator"), study=study
            )
        )
    )
    rows = qs.values(
        *fields.values(),
        "annotator_labels_excluded",
        "hard_refusal",
        "cue_label",
        "note",
        "broken_image",
        "served_at",
        "submitted_at",
        "updated_at",
        "seconds_to_answer",
        "too_fast",
        "revision",
        "source",
        "language",
        "consent_version",
    ).order_by("assignment__item__item_id", "assignment__annotator__user__username")
    out = []
    for row in rows:
        record = {key: row.pop(path) for key, path in fields.items()}
        record["annotator_labels_excluded"] = row.pop("annotator_labels_excluded")
        record["cue"] = row.pop("cue_label") or None
        record.update(row)
        out.append(ANNOTATION_ROW.row(record))
    return out


def judgment_rows(*, study: Study) -> list[dict]:
    """The judgments that answer a question (gold items left out): ``export_fields.JUDGMENT_ROW``."""
    # A judgment counts when it answers a question: refusal (hard_refusal set) or cue (a label).
    qs = AutomatedJudgment.objects.filter(
        INCLUDED_JUDGMENTS, item__study=study, item__is_gold=False, error=""
    ).filter(Q(hard_refusal__isnull=False) | ~Q(cue_label=""))
    fields = ITEM_FIELDS  # a judgment reaches the item by the same paths
    rows = qs.values(
        *fields.values(),
        "judge",
        "judge_version",
        "hard_refusal",
        "cue_label",
        "score",
        "confidence",
    )
    out = []
    for row in rows:
        record = {key: row.pop(path) for key, path in fields.items()}
        record["judge"] = f"{row.pop('judge')}@{row.pop('judge_version')}"
        record["cue"] = row.pop("cue_label") or None
        record.update(row)
        out.append(JUDGMENT_ROW.row(record))
    return out


def item_judge_uncertainty(*, study: Study, item_ids: list[int]) -> dict[int, float]:
    """Item pk -> the judges' uncertainty on it (``policies.judge_uncertainty``), in one query."""
    verdicts: dict[int, list] = {pk: [] for pk in item_ids}
    # By study, not by a list of ids: SQLite refuses an IN of 100,000 parameters.
    rows = (
        AutomatedJudgment.objects.filter(item__study=study, error="")
        .filter(Q(hard_refusal__isnull=False) | ~Q(cue_label=""))
        .values_list("item_id", "hard_refusal", "cue_label", "confidence")
    )
    for item_id, hard_refusal, cue_label, confidence in rows:
        if item_id in verdicts:
            label = "refused" if hard_refusal else (cue_label or "not refused")
            verdicts[item_id].append((label, confidence))
    return {pk: judge_uncertainty(found) for pk, found in verdicts.items()}


def gold_accuracy(*, study: Study) -> list[dict]:
    """Per annotator: gold items answered and how many matched the known answer
    (docs/metrics.md, "Gold accuracy"; the one computation the page and the report share)."""
    rows = Annotation.objects.filter(
        INCLUDED_ANSWERS,
        assignment__item__study=study,
        assignment__item__is_gold=True,
        assignment__is_active=True,
        # A qualification round is scored on its own (its attempt's result), not here.
        assignment__qualification_attempt__isnull=True,
    ).values(
        "assignment__annotator__user__username",
        "hard_refusal",
        "cue_label",
        "assignment__item__gold_hard_refusal",
        "assignment__item__gold_cue",
    )
    return gold_accuracy_from_records(
        {
            "annotator": r["assignment__annotator__user__username"],
            "hard_refusal": r["hard_refusal"],
            "cue": r["cue_label"],
            "gold_hard_refusal": r["assignment__item__gold_hard_refusal"],
            "gold_cue": r["assignment__item__gold_cue"],
        }
        for r in rows
    )


def study_data_fingerprint(*, study: Study) -> str:
    """Changes whenever an answer, judgment, item, gold flag, adjudication, label exclusion or
    equivalence margin of the study changes (six queries). A SHA-256 hex digest, like REFLECT's answers fingerprint:
    the report prints it, and the counts and times it hashes are internals."""
    answers = Annotation.objects.filter(assignment__item__study=study).aggregate(
        n=Count("id"),
        last=Max("updated_at"),
        active=Count("id", filter=Q(assignment__is_active=True)),
    )
    judged = AutomatedJudgment.objects.filter(item__study=study).aggregate(
        n=Count("id"), last=Max("updated_at"), top=Max("id")
    )
    items = Item.objects.filter(study=study).aggregate(
        n=Count("id"),
        top=Max("id"),
        gold=Count("id", filter=Q(is_gold=True)),
        excluded=Count("excluded_at"),
        last_excluded=Max("excluded_at"),
    )
    # Label exclusions and adjudications change statistics without touching an answer.
    decisions = Adjudication.objects.filter(item__study=study).aggregate(
        n=Count("id"), top=Max("id")
    )
    excluded = AnnotatorLabelExclusion.objects.filter(study=study).aggregate(
        n=Count("id"), last=Max("excluded_at")
    )
    # So does a new equivalence margin δ (rows are only ever added).
    margins = EquivalenceMargin.objects.filter(study=study).aggregate(top=Max("id"))
    parts = [*answers.values(), *judged.values(), *items.values(), *decisions.values()]
    parts += [*excluded.values(), *margins.values()]
    return hashlib.sha256("|".join(str(p) for p in parts).encode()).hexdigest()


def items_per_attribute_value(*, study: Study, item_ids: list[int] | None = None) -> dict[str, int]:
    """The items a batch may give annotators (``Item.objects.for_annotators``: no gold, harmful
    controls only when opted in), or those of ``item_ids``, per attribute value: what an
    expertise-matched batch matches on."""
    rows = Item.objects.for_annotators(study)
    if item_ids is not None:
        rows = rows.filter(pk__in=item_ids)
    rows = rows.values_list("attribute_value__value").annotate(n=Count("id")).order_by()
    return {value: n for value, n in rows if value}


def study_generators(*, study: Study) -> list[str]:
    """The generators a comparison of this study's models sets side by side: those named on its
    included benign items, in name order (docs/report.md, "Models side by side")."""
    return list(
        Item.objects.included()
        .filter(study=study, intent="benign")
        .exclude(generator="")
        .values_list("generator", flat=True)
        .distinct()
        .order_by("generator")
    )


def study_counts(*, study: Study) -> dict:
    items = Item.objects.filter(study=study).aggregate(
        items=Count("id"),
        gold=Count("id", filter=Q(is_gold=True)),
        review=Count("id", filter=Q(needs_review=True)),
        excluded=Count("excluded_at"),
    )
    assignments = Assignment.objects.filter(item__study=study, is_active=True).aggregate(
        assignments=Count("id"), answered=Count("annotation")
    )
    return items | assignments


def excluded_items(*, study: Study) -> list[dict]:
    """The study's excluded items with their reasons: what the metrics export lists."""
    return list(
        Item.objects.filter(study=study, excluded_at__isnull=False)
        .values("pk", "item_id", "excluded_reason", "excluded_at")
        .order_by("item_id")
    )


def excluded_annotators(*, study: Study) -> list[dict]:
    """Annotators of the study whose labels staff left out of statistics, with the reason."""
    rows = (
        AnnotatorLabelExclusion.objects.filter(study=study)
        .values_list("annotator__user__username", "reason", "excluded_at")
        .order_by("annotator__user__username")
    )
    return [{"annotator": a, "reason": r, "excluded_at": at} for a, r, at in rows]


# --- broken-image flags (docs/annotation.md#broken-image-flags) ------------------------------


def _flags(study: Study):
    return Annotation.objects.filter(
        assignment__item__study=study, assignment__is_active=True, broken_image=True
    )


def _open_flags(study: Study):
    """Flags staff have not reviewed yet: set after the item's last review, item not excluded."""
    return _flags(study).filter(
        Q(assignment__item__flags_reviewed_at__isnull=True)
        | Q(updated_at__gt=F("assignment__item__flags_reviewed_at")),
        assignment__item__excluded_at__isnull=True,
    )


def flag_queue_size(*, study: Study) -> int:
    """How many items wait for a review of their broken-image flags (one query)."""
    return _open_flags(study).values("assignment__item").distinct().count()


def flag_queue(*, study: Study, limit: int = 200) -> tuple[int, list[dict]]:
    """(how many items wait for review, the first ``limit`` of them, each with its open flags:
    annotator, note, when), oldest flag first, in at most five queries."""
    per_item = (
        _open_flags(study)
        .values("assignment__item")
        .annotate(open_flags=Count("id"), first_flag=Min("updated_at"))
        .order_by("first_flag", "assignment__item")
    )
    heads = list(per_item[:limit])
    total = per_item.count() if len(heads) == limit else len(heads)
    if not heads:
        return 0, []
    item_pks = [row["assignment__item"] for row in heads]
    items = {
        row["pk"]: row
        for row in Item.objects.filter(pk__in=item_pks).values(
            "pk", "item_id", "generator", "prompt", "image", "attribute_value__value"
        )
    }
    counts = dict(
        _flags(study)
        .filter(assignment__item__in=item_pks)
        .values("assignment__item")
        .annotate(n=Count("id"))
        .values_list("assignment__item", "n")
    )
    notes: dict[int, list[dict]] = {pk: [] for pk in item_pks}
    for row in (
        _open_flags(study)
        .filter(assignment__item__in=item_pks)
        .values("assignment__item", "assignment__annotator__user__username", "note", "updated_at")
        .order_by("updated_at")
    ):
        notes[row["assignment__item"]].append(
            {
                "annotator": row["assignment__annotator__user__username"],
                "note": row["note"],
                "flagged_at": row["updated_at"],
            }
        )
    queue = [
        {
            **items[row["assignment__item"]],
            "open_flags": row["open_flags"],
            "all_flags": counts.get(row["assignment__item"], 0),
            "flags": notes[row["assignment__item"]],
        }
        for row in heads
    ]
    return total, queue


def flag_counts_by_annotator(*, study: Study) -> list[dict]:
    """Per annotator: answers, broken-image flags, and the share flagged (one query)."""
    rows = (
        Annotation.objects.filter(assignment__item__study=study, assignment__is_active=True)
        .values("assignment__annotator__user__username")
        .annotate(answers=Count("id"), flags=Count("id", filter=Q(broken_image=True)))
        .order_by("-flags", "assignment__annotator__user__username")
    )
    return [
        {
            "annotator": r["assignment__annotator__user__username"],
            "answers": r["answers"],
            "flags": r["flags"],
            "share": r["flags"] / r["answers"] if r["answers"] else None,
        }
        for r in rows
    ]


def item_review_list(*, study: Study, limit: int = 50) -> list[ItemReview]:
    """The latest staff actions on flagged items, newest first."""
    return list(
        ItemReview.objects.filter(item__study=study).select_related("item", "acted_by")[:limit]
    )


# --- who `create_batch --annotators all | installation` takes (docs/annotation.md) ------------


def annotator_pool(*, study: Study, include_staff: bool = False):
    """The study's pool: the active annotators who already take part in it, with an assignment
    in one of its batches, a consent to it, an invite link of one of its batches they redeemed,
    or a panel enrolment in it. Staff accounts are left out unless ``include_staff``."""
    # Through the recruitment tables' reverse names (consents, invite_link, panel_participant):
    # selectors sit below the recruitment package.
    joined = (
        Q(pk__in=Assignment.objects.filter(batch__study=study).values("annotator"))
        | Q(pk__in=Annotator.objects.filter(consents__study=study).values("pk"))
        | Q(pk__in=Annotator.objects.filter(invite_link__batch__study=study).values("pk"))
        | Q(pk__in=Annotator.objects.filter(panel_participant__study=study).values("pk"))
    )
    return _without(Annotator.objects.filter(joined, is_active=True), staff=not include_staff)


def annotator_installation(*, include_staff: bool = False, include_demo: bool = False):
    """Every active annotator of the installation, except staff accounts and the accounts of the
    synthetic demo study (its simulated annotators and demo logins: annotators who take part in
    a study marked ``is_synthetic_demo``), unless asked for."""
    rows = Annotator.objects.filter(is_active=True)
    if not include_demo:
        demo = Study.objects.filter(is_synthetic_demo=True)
        rows = rows.exclude(
            pk__in=Assignment.objects.filter(batch__study__in=demo).values("annotator")
        )
        rows = rows.exclude(pk__in=Annotator.objects.filter(consents__study__in=demo).values("pk"))
    return _without(rows, staff=not include_staff)


def _without(rows, *, staff: bool):
    if staff:
        rows = rows.filter(user__is_staff=False, user__is_superuser=False)
    return rows.select_related("user").order_by("pk")

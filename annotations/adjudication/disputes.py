"""Adjudication: who may adjudicate, the queue of disputed items, the unblinded view of one item,
and the recorded decisions (docs/annotation.md#adjudication).

Writes run in one transaction and only ever add ``Adjudication`` rows; an item's highest
revision is its adjudicated label. Reads answer in a fixed number of queries.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Count, Exists, OuterRef
from django.http import Http404
from django.utils import timezone

from annotations.labels import LabelError, parse_cue_label
from annotations.models import (
    Adjudication,
    AdjudicatorGrant,
    Annotation,
    Annotator,
    AnnotatorLabelExclusion,
    AutomatedJudgment,
    Item,
    Study,
)
from annotations.selectors import INCLUDED_ANSWERS, annotator_for_user

REFUSED = "refused"  # an answer's label when it is a hard refusal (cue labels otherwise)


# --- who may adjudicate --------------------------------------------------------------------


def user_may_adjudicate(*, user, study: Study) -> bool:
    """Staff, or an active annotator granted this study."""
    if not user.is_authenticated:
        return False
    if user.is_staff:
        return True
    annotator = annotator_for_user(user)
    return (
        annotator is not None
        and AdjudicatorGrant.objects.filter(study=study, annotator=annotator).exists()
    )


def check_adjudicator(*, user, study: Study) -> None:
    if not user_may_adjudicate(user=user, study=study):
        raise PermissionDenied("adjudicators of this study only")


def adjudicated_studies(*, annotator: Annotator | None) -> list[Study]:
    """The studies an annotator was granted to adjudicate (one query; none without a profile)."""
    if annotator is None:
        return []
    return list(Study.objects.filter(adjudicator_grants__annotator=annotator).order_by("name"))


def open_items_of(*, annotator: Annotator, study: Study):
    """The study's items still in the annotator's queue (active and unanswered)."""
    return Item.objects.filter(
        study=study,
        assignments__annotator=annotator,
        assignments__is_active=True,
        assignments__answered_at__isnull=True,
    )


def adjudicator_grant(*, study: Study, annotator: Annotator, user) -> AdjudicatorGrant:
    """Let an annotator adjudicate a study; granting twice keeps the first grant. Refused
    while they have open items there: adjudication shows other annotators' answers and the
    judges' outputs, which would unblind their own answers (docs/annotation.md)."""
    open_items = open_items_of(annotator=annotator, study=study).count()
    if open_items:
        raise ValidationError(
            f"{annotator} still has {open_items} open item(s) in {study.slug}: adjudicating "
            "would show them others' answers first; reassign or finish those items, then grant"
        )
    grant, _ = AdjudicatorGrant.objects.get_or_create(
        study=study,
        annotator=annotator,
        defaults={"granted_by": user, "granted_at": timezone.now()},
    )
    return grant


def adjudicator_revoke(*, study: Study, annotator: Annotator) -> int:
    return AdjudicatorGrant.objects.filter(study=study, annotator=annotator).delete()[0]


# --- the decision --------------------------------------------------------------------------


def adjudication_record(
    *, item: Item, hard_refusal: bool, cue_label: str | None, reason: str, user
) -> Adjudication:
    """Record the item's final label with a reason, as a new revision.

    Repeating the latest decision (a double submit) adds nothing; a different one is a new
    revision, and the earlier rows stay.
    """
    reason = (reason or "").strip()[:5000]
    if not reason:
        raise ValidationError("give a reason for the decision")
    try:
        cue = parse_cue_label(cue_label, hard_refusal=hard_refusal) or ""
    except LabelError as exc:
        raise ValidationError(str(exc)) from None
    with transaction.atomic():
        locked = Item.objects.select_for_update().get(pk=item.pk)
        latest = locked.adjudications.order_by("-revision").first()
        if latest is not None and (latest.hard_refusal, latest.cue_label, latest.reason) == (
            hard_refusal,
            cue,
            reason,
        ):
            return latest
        return Adjudication.objects.create(
            item=locked,
            revision=(latest.revision + 1) if latest else 1,
            hard_refusal=hard_refusal,
            cue_label=cue,
            reason=reason,
            decided_by=user if user and user.is_authenticated else None,
            decided_at=timezone.now(),
        )


# --- the queue -----------------------------------------------------------------------------


def answer_label(hard_refusal: bool, cue_label: str) -> str:
    """One label per answer for the disagreement test: refused, or the cue label."""
    return REFUSED if hard_refusal else cue_label


def majority(labels: list[str]) -> str | None:
    """The most frequent label, or None when the top two tie (no majority)."""
    counts = Counter(labels).most_common(2)
    if not counts or (len(counts) == 2 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


@dataclass(frozen=True)
class Dispute:
    """Why an item is in the adjudication queue, and how it ranks there."""

    item_pk: int
    item_id: str
    attribute_value: str
    value_items: int  # included, non-gold items of the same attribute value
    n_answers: int
    human_labels: dict[str, int]
    judge_labels: dict[str, int]
    annotators_disagree: bool
    judges_disagree: bool  # the human majority differs from the judges' majority

    @property
    def agreement_share(self) -> float:
        """The share of answers on the most common label: lower is a closer split."""
        return max(self.human_labels.values()) / self.n_answers

    @property
    def sort_key(self):
        # docs/annotation.md#adjudication: attribute values with few items first (one decision
        # moves their rates most), then the closest splits, then the item id.
        return (self.value_items, self.agreement_share, self.item_id)


def dispute_for(
    *,
    item_pk,
    item_id,
    attribute_value,
    value_items,
    human: list[str],
    judges: list[str],
) -> Dispute | None:
    """The item's dispute, or None when its annotators agree and the judges do not contradict
    their majority (items with fewer than two answers are never disputed)."""
    if len(human) < 2:
        return None
    annotators_disagree = len(set(human)) > 1
    human_majority, judge_majority = majority(human), majority(judges)
    judges_disagree = (
        human_majority is not None
        and judge_majority is not None
        and human_majority != judge_majority
    )
    if not (annotators_disagree or judges_disagree):
        return None
    return Dispute(
        item_pk=item_pk,
        item_id=item_id,
        attribute_value=attribute_value,
        value_items=value_items,
        n_answers=len(human),
        human_labels=dict(Counter(human)),
        judge_labels=dict(Counter(judges)),
        annotators_disagree=annotators_disagree,
        judges_disagree=judges_disagree,
    )


def counted_answers(study: Study):
    """Answers that count: active, on included non-gold items, from annotators whose labels
    are not excluded."""
    return Annotation.objects.filter(
        INCLUDED_ANSWERS,
        assignment__item__study=study,
        assignment__item__is_gold=False,
        assignment__is_active=True,
    ).exclude(assignment__annotator__label_exclusions__study=study)


def adjudication_queue(
    *, study: Study, include_decided: bool = False, viewer: Annotator | None = None
) -> list[Dispute]:
    """Disputed items in priority order (four queries); decided items only if asked. For an
    annotator ``viewer``, never an item still in their own queue (blinding)."""
    human: dict[int, list[str]] = {}
    for pk, refused, cue in counted_answers(study).values_list(
        "assignment__item", "hard_refusal", "cue_label"
    ):
        human.setdefault(pk, []).append(answer_label(refused, cue))
    judges: dict[int, list[str]] = {}
    for pk, refused, cue in (
        AutomatedJudgment.objects.filter(item__study=study, item__is_gold=False, error="")
        .filter(hard_refusal__isnull=False)
        .values_list("item", "hard_refusal", "cue_label")
    ):
        # A judge without a cue label votes on refusal only: "not refused" is no label to compare.
        if refused or cue:
            judges.setdefault(pk, []).append(answer_label(refused, cue))
    items = Item.objects.included().filter(study=study, is_gold=False, pk__in=list(human))
    if not include_decided:
        items = items.filter(adjudications__isnull=True)
    if viewer is not None:
        items = items.exclude(pk__in=open_items_of(annotator=viewer, study=study).values("pk"))
    value_items = dict(
        Item.objects.included()
        .filter(study=study, is_gold=False)
        .values("attribute_value")
        .annotate(n=Count("id"))
        .values_list("attribute_value", "n")
    )
    disputes = []
    for pk, item_id, value_pk, value in items.values_list(
        "pk", "item_id", "attribute_value", "attribute_value__value"
    ):
        dispute = dispute_for(
            item_pk=pk,
            item_id=item_id,
            attribute_value=value,
            value_items=value_items.get(value_pk, 0),
            human=human[pk],
            judges=judges.get(pk, []),
        )
        if dispute is not None:
            disputes.append(dispute)
    return sorted(disputes, key=lambda d: d.sort_key)


# --- one item, unblinded -------------------------------------------------------------------


def item_for_adjudication(*, study: Study, item_pk: int, viewer: Annotator | None = None) -> Item:
    """The item with its evidence, or 404; for an annotator ``viewer`` also 404 while the item
    is still in their own queue (its other answers would unblind theirs)."""
    items = Item.objects.select_related("attribute_value", "study").filter(study=study)
    if viewer is not None:
        items = items.exclude(pk__in=open_items_of(annotator=viewer, study=study).values("pk"))
    item = items.filter(pk=item_pk).first()
    if item is None:
        raise Http404("no such item")
    return item


def item_evidence(*, item: Item) -> dict:
    """Every answer (with its annotator, note and revisions), every judge output and every
    earlier decision on the item: what the adjudicator sees (four queries)."""
    answers = list(
        Annotation.objects.filter(assignment__item=item, assignment__is_active=True)
        .annotate(
            n_history=Count("history"),
            labels_excluded=Exists(
                AnnotatorLabelExclusion.objects.filter(
                    annotator=OuterRef("assignment__annotator"), study_id=item.study_id
                )
            ),
        )
        .values(
            "assignment__annotator__user__username",
            "assignment__annotator__group",
            "labels_excluded",
            "hard_refusal",
            "cue_label",
            "note",
            "broken_image",
            "seconds_to_answer",
            "too_fast",
            "revision",
            "updated_at",
        )
        .order_by("assignment__annotator__user__username")
    )
    judgments = list(
        AutomatedJudgment.objects.filter(item=item)
        .values(
            "judge",
            "judge_version",
            "hard_refusal",
            "cue_label",
            "score",
            "confidence",
            "error",
            "raw_output",
        )
        .order_by("judge", "judge_version")
    )
    decisions = list(item.adjudications.select_related("decided_by").order_by("-revision"))
    return {
        "answers": [
            {
                "annotator": a["assignment__annotator__user__username"],
                "group": a["assignment__annotator__group"],
                **{k: a[k] for k in a if not k.startswith("assignment__")},
            }
            for a in answers
        ],
        # Judge output as JSON text, the way the judge wrote it (not Python's repr).
        "judgments": [
            {**j, "raw_output": json.dumps(j["raw_output"], ensure_ascii=False, sort_keys=True)}
            for j in judgments
        ],
        "decisions": decisions,
    }


def adjudicated_labels(*, study: Study) -> dict[str, dict]:
    """item_id → the latest decision's labels, for included non-gold items (one query)."""
    rows = (
        Adjudication.objects.filter(
            item__study=study, item__is_gold=False, item__excluded_at__isnull=True
        )
        .values_list("item__item_id", "hard_refusal", "cue_label")
        .order_by("item", "revision")
    )
    # Later revisions overwrite earlier ones.
    return {
        item_id: {"hard_refusal": refused, "cue": cue or None} for item_id, refused, cue in rows
    }

"""Example items per answer: staff attach existing items of a study, annotators read them.

Writes take keyword-only arguments and run in one transaction; setting an item's example twice
leaves one row with the last label and explanation (a retry changes nothing), and removing a
removed example is not an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotations.common.answers import ANSWER_TITLES
from annotations.labels import ANSWERS
from annotations.models import Item, LabelExample, Study

EXPLANATION_MAX_CHARS = 500


@dataclass
class AnswerExamples:
    """One answer of the survey and the example items staff attached to it."""

    answer: str
    title: str
    examples: list[LabelExample] = field(default_factory=list)


def label_example_set(
    *, study: Study, item_id: str, label: str, explanation: str, user=None
) -> LabelExample:
    """Make the study's item ``item_id`` an example of ``label`` with ``explanation``.

    Refused (ValidationError, nothing written): an item of another study or none, a label
    outside the survey's answers, an empty or over-long explanation, and a gold item (its
    example would tell annotators the answer that checks them).
    """
    explanation = (explanation or "").strip()
    if label not in ANSWERS:
        raise ValidationError(f"label: {label!r} is not one of {', '.join(ANSWERS)}")
    if not explanation:
        raise ValidationError("explanation: say in a sentence why this item is an example")
    if len(explanation) > EXPLANATION_MAX_CHARS:
        raise ValidationError(f"explanation: at most {EXPLANATION_MAX_CHARS} characters")
    item = Item.objects.filter(study=study, item_id=(item_id or "").strip()).first()
    if item is None:
        raise ValidationError(f"item: this study has no item {item_id!r}")
    if item.is_gold:
        raise ValidationError(
            f"item: {item.item_id} is a gold item; as an example it would reveal its answer"
        )
    now = timezone.now()
    with transaction.atomic():
        example, _ = LabelExample.objects.select_for_update().update_or_create(
            item=item,
            defaults={
                "study": study,
                "label": label,
                "explanation": explanation,
                "updated_at": now,
            },
            create_defaults={
                "study": study,
                "label": label,
                "explanation": explanation,
                "created_by": user,
                "created_at": now,
                "updated_at": now,
            },
        )
    return example


def label_example_remove(*, study: Study, example_id: int) -> bool:
    """Remove one of the study's examples; False when there was none (already removed)."""
    deleted, _ = LabelExample.objects.filter(study=study, pk=example_id).delete()
    return bool(deleted)


def label_examples_by_answer(*, study: Study) -> list[AnswerExamples]:
    """Every answer of the survey in the survey's order, each with its examples (and
    ``n_assigned``, the item's active assignments), in one query."""
    groups = {answer: AnswerExamples(answer, ANSWER_TITLES[answer]) for answer in ANSWERS}
    rows = (
        LabelExample.objects.filter(study=study)
        .select_related("item")
        .only("label", "explanation", "created_at", "item__item_id", "item__image")
        # Staff see how many annotators also label the item: they have seen its example answer.
        .annotate(
            n_assigned=Count("item__assignments", filter=Q(item__assignments__is_active=True))
        )
        # An aggregate query has no order of its own (PostgreSQL returns any): by item id.
        .order_by("item__item_id")
    )
    for example in rows:
        groups[example.label].examples.append(example)
    return list(groups.values())

"""The study's audit context, edited by staff: what was audited and for what (the report's legal
mapping) and how the annotators were recruited and paid (its people-and-data section).

One write, ``study_audit_context_update``, and one read, ``study_audit_context_history``. The
change history is Django admin's ``LogEntry``: these fields were first edited in the admin, which
writes a LogEntry per change, so a change made on the staff page writes one too, in the same
transaction, and the study's admin History lists both (who, when, which fields).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ValidationError
from django.db import transaction

from annotations.models import Study

AUDIT_CONTEXT_FIELDS = ("system_kind", "intended_purpose", "annotator_recruitment", "annotator_pay")
# A page of text is plenty for any of them; the report prints them whole.
TEXT_MAX_CHARS = 4000


def audit_context_missing(*, study: Study) -> list[str]:
    """The names of the study's audit-context fields that are still empty (no query)."""
    return [
        str(Study._meta.get_field(field).verbose_name)
        for field in AUDIT_CONTEXT_FIELDS
        if not getattr(study, field)
    ]


class AuditContextInvalid(ValueError):
    """Bad values: ``errors`` maps each bad field to one line."""

    def __init__(self, errors: Mapping[str, str]):
        self.errors = dict(errors)
        super().__init__("; ".join(f"{field}: {message}" for field, message in self.errors.items()))


def audit_context_errors(values: Mapping[str, Any]) -> dict[str, str]:
    """One line per bad field of ``values`` (unknown fields, an unknown system kind, overlong text)."""
    errors = {}
    for field, value in values.items():
        if field not in AUDIT_CONTEXT_FIELDS:
            errors[field] = (
                f"not an audit-context field; expected one of {', '.join(AUDIT_CONTEXT_FIELDS)}"
            )
        elif not isinstance(value, str):
            errors[field] = "must be text"
        elif field == "system_kind" and value and value not in Study.SystemKind.values:
            known = ", ".join(Study.SystemKind.values)
            errors[field] = f"unknown system kind {value!r}; expected one of: {known} (or empty)"
        elif len(value) > TEXT_MAX_CHARS:
            errors[field] = f"{len(value)} characters; at most {TEXT_MAX_CHARS}"
    return errors


def study_audit_context_update(*, study: Study, values: Mapping[str, str], changed_by) -> list[str]:
    """Set the given audit-context fields (a PUT: the same values twice change nothing) and write
    one history row naming the changed fields. Returns the changed field names, in field order.

    Raises AuditContextInvalid (nothing changed) when any value is bad.
    """
    errors = audit_context_errors(values)
    if errors:
        raise AuditContextInvalid(errors)
    cleaned = {field: value.strip() for field, value in values.items()}
    with transaction.atomic():
        study = Study.objects.select_for_update().get(pk=study.pk)
        changed = [
            f for f in AUDIT_CONTEXT_FIELDS if f in cleaned and getattr(study, f) != cleaned[f]
        ]
        if not changed:
            return []
        for field in changed:
            setattr(study, field, cleaned[field])
        try:
            study.full_clean(exclude=[f.name for f in Study._meta.fields if f.name not in changed])
        except ValidationError as error:  # the model's own rules, should they grow
            raise AuditContextInvalid(
                {field: " ".join(messages) for field, messages in error.message_dict.items()}
            ) from error
        study.save(update_fields=changed)
        labels = [str(Study._meta.get_field(f).verbose_name) for f in changed]
        LogEntry.objects.log_actions(
            user_id=changed_by.pk,
            queryset=[study],
            action_flag=CHANGE,
            change_message=[{"changed": {"fields": labels}}],
            single_object=True,
        )
    return changed


def study_harmful_controls_set(*, study: Study, show: bool, changed_by) -> bool:
    """Whether new batches include the study's harmful controls (behind a content warning; docs/
    annotation.md, "Harmful controls"). A PUT: the same value twice changes nothing. Writes a
    history row when it changes; returns whether it did. Batches already made keep theirs."""
    with transaction.atomic():
        study = Study.objects.select_for_update().get(pk=study.pk)
        if study.harmful_to_annotators == bool(show):
            return False
        study.harmful_to_annotators = bool(show)
        study.save(update_fields=["harmful_to_annotators"])
        label = str(Study._meta.get_field("harmful_to_annotators").verbose_name)
        LogEntry.objects.log_actions(
            user_id=changed_by.pk,
            queryset=[study],
            action_flag=CHANGE,
            change_message=[{"changed": {"fields": [label]}}],
            single_object=True,
        )
    return True


def study_audit_context_history(*, study: Study, limit: int = 10) -> list[LogEntry]:
    """The study's latest change records (the staff page and the admin alike), newest first."""
    return list(
        LogEntry.objects.filter(
            content_type=ContentType.objects.get_for_model(Study), object_id=str(study.pk)
        )
        .select_related("user")
        .order_by("-action_time", "-pk")[:limit]
    )

"""Consent versions and records: publish a version, what an annotator must still agree to,
record an agreement. See docs/annotation.md#consent-and-instructions."""

from __future__ import annotations

import hashlib

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from ..models import Annotator, Study
from .models import ConsentRecord, StudyConsent
from .rules import RecruitmentError


def consent_publish(
    *, study: Study, consent_text: str, instructions: str = "", created_by=None
) -> StudyConsent:
    """Add the next consent version of a study (earlier versions and their records stay).

    The text of the current version again (a double-clicked form, a command run twice) makes no
    new version and returns the current one: every version is a change annotators must agree to
    before their next answer, so an identical one would ask them again for nothing.
    """
    consent_text = (consent_text or "").strip()
    instructions = (instructions or "").strip()
    if not consent_text:
        raise RecruitmentError("the consent text is empty")
    with transaction.atomic():
        # Lock the study row so two publishers cannot both take the same next version, and a
        # second identical request waits for the first and then finds its version.
        Study.objects.select_for_update().filter(pk=study.pk).first()
        current = consent_current(study_id=study.pk)
        if current is not None and (current.consent_text, current.instructions) == (
            consent_text,
            instructions,
        ):
            return current
        return StudyConsent.objects.create(
            study=study,
            version=(current.version if current else 0) + 1,
            consent_text=consent_text,
            instructions=instructions,
            created_by=created_by,
        )


def consent_current(*, study_id: int) -> StudyConsent | None:
    return StudyConsent.objects.filter(study_id=study_id).order_by("-version").first()


def consent_pending(*, annotator: Annotator, study_id: int) -> StudyConsent | None:
    """The consent version the annotator must agree to before their next item or answer: the
    study's current one, unless they agreed to that very version; None when nothing is asked."""
    current = consent_current(study_id=study_id)
    if current is None:
        return None
    if ConsentRecord.objects.filter(annotator=annotator, consent=current).exists():
        return None
    return current


def consent_last_agreed(*, annotator: Annotator, study_id: int) -> int | None:
    """The latest consent version of the study the annotator agreed to, or None."""
    return (
        ConsentRecord.objects.filter(annotator=annotator, study_id=study_id)
        .order_by("-version")
        .values_list("version", flat=True)
        .first()
    )


def consent_text_digest(consent: StudyConsent) -> str:
    shown = f"{consent.consent_text}\n\n{consent.instructions}"
    return hashlib.sha256(shown.encode("utf-8")).hexdigest()


def consent_record(*, annotator: Annotator, consent: StudyConsent) -> ConsentRecord:
    """Record agreement to this version; agreeing again (a retried POST) keeps the first record."""
    record, _ = ConsentRecord.objects.get_or_create(
        annotator=annotator,
        consent=consent,
        defaults={
            "study_id": consent.study_id,
            "version": consent.version,
            "text_sha256": consent_text_digest(consent),
            "agreed_at": timezone.now(),
        },
    )
    return record


def consent_shown(*, study: Study, consent_id) -> StudyConsent:
    """The version the person was shown (posted back by the form), checked against the study;
    refused when a newer version was published while the page was open (they agreed to a
    text that is no longer the study's)."""
    try:
        shown = StudyConsent.objects.get(pk=int(consent_id), study=study)
    except (TypeError, ValueError, StudyConsent.DoesNotExist):
        raise RecruitmentError(
            gettext_noop("The consent form was incomplete; reload the page.")
        ) from None
    current = consent_current(study_id=study.pk)
    if current is not None and current.pk != shown.pk:
        raise RecruitmentError(
            gettext_noop(
                "The consent text changed while this page was open: reload the page, read the "
                "new version and agree again."
            )
        )
    return shown

"""Consent versions and records: publish a version, what an annotator must still agree to,
record an agreement. See docs/annotation.md#consent-and-instructions."""

from __future__ import annotations

import hashlib

from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext_noop

from ..models import Annotator, Study
from .models import ConsentRecord, StudyConsent
from .rules import RecruitmentError


def consent_publish(
    *, study: Study, consent_text: str, instructions: str = "", created_by=None
) -> StudyConsent:
    """Add the next consent version of a study (earlier versions and their records stay)."""
    consent_text = (consent_text or "").strip()
    if not consent_text:
        raise RecruitmentError("the consent text is empty")
    with transaction.atomic():
        # Lock the study row so two publishers cannot both take the same next version.
        Study.objects.select_for_update().filter(pk=study.pk).first()
        latest = study.consent_versions.aggregate(v=Max("version"))["v"] or 0
        return StudyConsent.objects.create(
            study=study,
            version=latest + 1,
            consent_text=consent_text,
            instructions=(instructions or "").strip(),
            created_by=created_by,
        )


def consent_current(*, study_id: int) -> StudyConsent | None:
    return StudyConsent.objects.filter(study_id=study_id).order_by("-version").first()


def consent_pending(*, annotator: Annotator, study_id: int) -> StudyConsent | None:
    """The consent version the annotator must agree to before any item, or None."""
    current = consent_current(study_id=study_id)
    if current is None:
        return None
    if ConsentRecord.objects.filter(annotator=annotator, study_id=study_id).exists():
        return None
    return current


def consent_text_digest(consent: StudyConsent) -> str:
    shown = f"{consent.consent_text}\n\n{consent.instructions}"
    return hashlib.sha256(shown.encode("utf-8")).hexdigest()


def consent_record(*, annotator: Annotator, consent: StudyConsent) -> ConsentRecord:
    """Record agreement to this version; agreeing again (a retried POST) keeps the first record."""
    record, _ = ConsentRecord.objects.get_or_create(
        annotator=annotator,
        study_id=consent.study_id,
        defaults={
            "consent": consent,
            "version": consent.version,
            "text_sha256": consent_text_digest(consent),
            "agreed_at": timezone.now(),
        },
    )
    return record


def consent_shown(*, study: Study, consent_id) -> StudyConsent:
    """The version the person was shown (posted back by the form), checked against the study."""
    try:
        return StudyConsent.objects.get(pk=int(consent_id), study=study)
    except (TypeError, ValueError, StudyConsent.DoesNotExist):
        raise RecruitmentError(
            gettext_noop("The consent form was incomplete; reload the page.")
        ) from None

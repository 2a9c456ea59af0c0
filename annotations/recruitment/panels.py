"""Panel study links (Prolific and similar): make and close links, enrol, resume, complete.
The threat model is in docs/annotation.md#panel-study-links-prolific-and-similar."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from ..models import Annotator, Assignment, Batch
from .consent import consent_record, consent_shown
from .enrolment import batch_enrol, check_batch_takes_recruits, recruit_annotator_create
from .models import PanelLink, PanelParticipant
from .rules import (
    PanelEntry,
    PanelParams,
    RecruitmentError,
    check_param_names,
    new_secret,
    secret_digest,
)


def panel_link_create(
    *,
    batch: Batch,
    name: str,
    group: str = "",
    params: PanelParams | None = None,
    completion_url: str = "",
    completion_code: str = "",
    created_by=None,
) -> PanelLink:
    check_batch_takes_recruits(batch)
    params = params or PanelParams()
    check_param_names(params)
    if not completion_url and not completion_code:
        raise RecruitmentError("give a completion URL or a completion code (or both)")
    if completion_url:
        try:
            URLValidator(schemes=["https", "http"])(completion_url)
        except ValidationError:
            raise RecruitmentError(
                f"completion URL {completion_url!r} is not an http(s) URL"
            ) from None
    return PanelLink.objects.create(
        batch=batch,
        name=name.strip() or batch.name,
        slug=new_secret()[:22],
        group=group.strip(),
        participant_param=params.participant,
        study_param=params.study,
        session_param=params.session,
        expected_study_id=params.expected_study_id.strip(),
        completion_url=completion_url.strip(),
        completion_code=completion_code.strip(),
        created_by=created_by,
    )


def panel_params(link: PanelLink) -> PanelParams:
    return PanelParams(
        participant=link.participant_param,
        study=link.study_param,
        session=link.session_param,
        expected_study_id=link.expected_study_id,
    )


def panel_link_close(*, link: PanelLink) -> None:
    """No new participants; those enrolled can still finish."""
    PanelLink.objects.filter(pk=link.pk, closed_at__isnull=True).update(closed_at=timezone.now())


def panel_participant_find(*, link: PanelLink, participant_id: str) -> PanelParticipant | None:
    return (
        PanelParticipant.objects.select_related("annotator__user", "panel_link")
        .filter(study_id=link.batch.study_id, participant_id=participant_id)
        .first()
    )


def panel_enrol(*, link: PanelLink, entry: PanelEntry, consent_id) -> tuple[PanelParticipant, str]:
    """Enrol a new participant: annotator, consent, assignments, and a browser key.

    Returns the participant and the browser key (the cookie's value; only its digest is
    stored). The unique (study, participant id) constraint stops a second enrolment even
    when two requests race; the loser gets the "already enrolled" refusal.
    """
    if link.closed_at is not None:
        raise RecruitmentError(gettext_noop("This study link is closed to new participants."))
    browser_key = new_secret()
    now = timezone.now()
    try:
        with transaction.atomic():
            consent = consent_shown(study=link.batch.study, consent_id=consent_id)
            annotator = recruit_annotator_create(
                username=f"panel-{link.pk}-{entry.participant_id}", group=link.group
            )
            participant = PanelParticipant.objects.create(
                panel_link=link,
                study_id=link.batch.study_id,
                participant_id=entry.participant_id,
                panel_study_id=entry.study_id,
                panel_session_id=entry.session_id,
                annotator=annotator,
                browser_key_sha256=secret_digest(browser_key),
                enrolled_at=now,
                last_seen_at=now,
            )
            consent_record(annotator=annotator, consent=consent)
            batch_enrol(batch=link.batch, annotator=annotator)
    except IntegrityError:
        raise RecruitmentError(
            gettext_noop("This participant id is already enrolled in this study.")
        ) from None
    return participant, browser_key


def panel_resume(
    *, participant: PanelParticipant, link: PanelLink, browser_key: str | None, user
) -> str | None:
    """Let a returning participant back in, or say in one line why not.

    Accepted: the same logged-in account, or the browser key set at first entry. A released
    participant (staff cleared the key) binds the browser they come back with; the new key is
    returned so the view can set it. Returns the new key, or None when the old one stays.
    """
    if participant.panel_link_id != link.pk:
        raise RecruitmentError(
            gettext_noop(
                "This participant id already took part in this study through another link."
            )
        )
    same_account = getattr(user, "pk", None) == participant.annotator.user_id
    key_matches = bool(browser_key) and participant.browser_key_sha256 == secret_digest(browser_key)
    new_key = None
    if not participant.browser_key_sha256:
        new_key = new_secret()
    elif not (same_account or key_matches):
        raise RecruitmentError(
            gettext_noop(
                "This participant id has already started this study in another browser: "
                "continue there, or ask the researcher to release it."
            )
        )
    updates = {"last_seen_at": timezone.now()}
    if new_key:
        updates["browser_key_sha256"] = secret_digest(new_key)
    PanelParticipant.objects.filter(pk=participant.pk).update(**updates)
    return new_key


def panel_participant_release(*, participant: PanelParticipant) -> None:
    """Staff: the participant changed browser or lost cookies; their next entry binds anew."""
    PanelParticipant.objects.filter(pk=participant.pk).update(browser_key_sha256="")


def panel_participant_for(*, annotator: Annotator, batch_id: int) -> PanelParticipant | None:
    return (
        PanelParticipant.objects.select_related("panel_link")
        .filter(annotator=annotator, panel_link__batch_id=batch_id)
        .first()
    )


def panel_complete(*, participant: PanelParticipant) -> bool:
    """Mark the participant complete if every item of theirs is answered (first time kept)."""
    open_items = Assignment.objects.filter(
        annotator=participant.annotator,
        batch_id=participant.panel_link.batch_id,
        is_active=True,
        answered_at__isnull=True,
    ).exists()
    if open_items:
        return False
    PanelParticipant.objects.filter(pk=participant.pk, completed_at__isnull=True).update(
        completed_at=timezone.now()
    )
    return True

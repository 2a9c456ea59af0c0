"""Invite links: make, look up, revoke and redeem single-use, expiring links.
See docs/annotation.md#invite-links."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from .. import services
from ..models import Annotator, Batch
from .consent import consent_record, consent_shown
from .enrolment import batch_enrol, check_batch_takes_recruits, recruit_annotator_create
from .models import InviteLink
from .rules import (
    DEFAULT_INVITE_DAYS,
    UNKNOWN_INVITE,
    LinkState,
    RecruitmentError,
    invite_state,
    new_secret,
    secret_digest,
)

MAX_INVITES_PER_REQUEST = 500
MAX_INVITE_DAYS = 365


def invite_links_create(
    *,
    batch: Batch,
    group: str,
    count: int = 1,
    days: float = DEFAULT_INVITE_DAYS,
    note: str = "",
    language: str = "",
    request_key: str = "",
    created_by=None,
) -> list[tuple[InviteLink, str]]:
    """Make ``count`` single-use links; returns (link, token) pairs. The tokens are not stored.

    ``request_key`` (a staff form's one-time key) makes the request idempotent: sent again, it
    makes no new link but gives the links it made new tokens (the first answer, with the old
    tokens, was never read by the person who submitted twice); links already used keep theirs.
    """
    check_batch_takes_recruits(batch)
    if not 1 <= count <= MAX_INVITES_PER_REQUEST:
        raise RecruitmentError(f"count must be between 1 and {MAX_INVITES_PER_REQUEST}")
    if not 0 < days <= MAX_INVITE_DAYS:
        raise RecruitmentError(
            f"expiry must be more than 0 and at most {MAX_INVITE_DAYS} days (got {days:g})"
        )
    languages = [code for code, _ in settings.LANGUAGES]
    if language and language not in languages:
        raise RecruitmentError(
            f"unknown language {language[:20]!r} (known: {', '.join(languages)})"
        )
    if len(request_key) > 64:
        raise RecruitmentError("the form's request key is too long: reload the page")
    if request_key and InviteLink.objects.filter(request_key=request_key).exists():
        return _invite_links_reissue(batch=batch, request_key=request_key, created_by=created_by)
    expires_at = timezone.now() + timedelta(days=days)
    made = []
    try:
        with transaction.atomic():
            for index in range(count):
                token = new_secret()
                link = InviteLink.objects.create(
                    batch=batch,
                    group=group.strip(),
                    note=note.strip(),
                    language=language,
                    token_sha256=secret_digest(token),
                    request_key=request_key,
                    request_index=index,
                    expires_at=expires_at,
                    created_by=created_by,
                )
                made.append((link, token))
    except IntegrityError:
        if not request_key:
            raise
        # The same form arrived twice at once: the other request made the links.
        return _invite_links_reissue(batch=batch, request_key=request_key, created_by=created_by)
    return made


def _invite_links_reissue(*, batch, request_key, created_by) -> list[tuple[InviteLink, str]]:
    """New tokens for the still-open links an earlier submit of the same form made."""
    links = list(InviteLink.objects.filter(request_key=request_key).order_by("request_index"))
    if any(
        link.batch_id != batch.pk or link.created_by_id != getattr(created_by, "pk", None)
        for link in links
    ):
        raise RecruitmentError("this form was already used for other invites: reload the page")
    now = timezone.now()
    made = []
    with transaction.atomic():
        for link in links:
            token = new_secret()
            reissued = InviteLink.objects.filter(
                pk=link.pk, used_at__isnull=True, revoked_at__isnull=True, expires_at__gt=now
            ).update(token_sha256=secret_digest(token))
            if reissued:
                made.append((link, token))
    return made


def invite_lookup(*, token: str) -> tuple[InviteLink | None, LinkState]:
    link = (
        InviteLink.objects.select_related("batch__study")
        .filter(token_sha256=secret_digest(token or ""))
        .first()
    )
    if link is None:
        return None, UNKNOWN_INVITE
    return link, invite_state(
        expires_at=link.expires_at,
        used_at=link.used_at,
        revoked_at=link.revoked_at,
        now=timezone.now(),
    )


def invite_revoke(*, link: InviteLink) -> bool:
    """Revoke an unused link; revoking twice, or a used link, changes nothing (returns False)."""
    return bool(
        InviteLink.objects.filter(pk=link.pk, revoked_at__isnull=True, used_at__isnull=True).update(
            revoked_at=timezone.now()
        )
    )


def invite_redeem(*, token: str, consent_id, language: str = "") -> tuple[Annotator, Batch]:
    """Use an invite: create the annotator in its group, record consent, enrol in its batch.

    ``language`` (one of settings.LANGUAGES, or empty: follow the browser) is saved as the
    annotator's survey language.

    The link is claimed by a conditional UPDATE inside the transaction, so two people opening
    one link at once cannot both get in; any refusal rolls everything back.
    """
    link, state = invite_lookup(token=token)
    if not state.usable:
        raise state.error()
    now = timezone.now()
    with transaction.atomic():
        claimed = InviteLink.objects.filter(
            pk=link.pk, used_at__isnull=True, revoked_at__isnull=True, expires_at__gt=now
        ).update(used_at=now)
        if not claimed:
            state = invite_lookup(token=token)[1]  # taken meanwhile: say why, as a lookup would
            raise (state if state.message else UNKNOWN_INVITE).error()
        consent = consent_shown(study=link.batch.study, consent_id=consent_id)
        annotator = recruit_annotator_create(username=f"invite-{link.pk}", group=link.group)
        InviteLink.objects.filter(pk=link.pk).update(annotator=annotator)
        if language in [code for code, _ in settings.LANGUAGES]:
            services.annotator_language_set(annotator=annotator, language=language)
        consent_record(annotator=annotator, consent=consent)
        batch_enrol(batch=link.batch, annotator=annotator)
    return annotator, link.batch

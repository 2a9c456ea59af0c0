"""Recruitment writes and reads: consent versions and records, invite links, panel links,
and enrolling a new annotator into a batch by the batch's policy.

Services take keyword-only arguments and run in one transaction; a refused request raises
``RecruitmentError`` (one line) and changes nothing. The rules are plain functions in
recruitment.py. See docs/annotation.md#recruitment-without-passwords.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta

import numpy as np
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import IntegrityError, transaction
from django.db.models import Count, Max, Q
from django.utils import timezone

from . import policies, services
from .models import Annotator, Assignment, Batch, Item, Study
from .recruitment import (
    DEFAULT_INVITE_DAYS,
    UNKNOWN_INVITE,
    LinkState,
    PanelEntry,
    PanelParams,
    RecruitmentError,
    check_param_names,
    enrolment_items,
    invite_state,
    new_secret,
    secret_digest,
)
from .recruitment_models import (
    ConsentRecord,
    InviteLink,
    PanelLink,
    PanelParticipant,
    StudyConsent,
)

MAX_INVITES_PER_REQUEST = 500
MAX_INVITE_DAYS = 365

# --- consent -------------------------------------------------------------------------------


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
        raise RecruitmentError("The consent form was incomplete; reload the page.") from None


# --- recruitment batches and enrolment -----------------------------------------------------


def recruitment_batch_create(
    *,
    study: Study,
    name: str,
    policy: str,
    overlap_k: int,
    items_per_annotator: int | None,
    gold_per_annotator: int = 0,
    seed: int | None = None,
    created_by=None,
) -> Batch:
    """A batch with no annotators yet: recruits join it one by one (all non-gold items)."""
    if policy not in (Batch.Policy.K_OVERLAP, Batch.Policy.EXPERTISE):
        raise RecruitmentError(f"policy must be k_overlap or expertise (got {policy!r})")
    if overlap_k < 1:
        raise RecruitmentError(f"overlap k must be at least 1 (got {overlap_k})")
    if items_per_annotator is not None and items_per_annotator < 1:
        raise RecruitmentError("items per annotator must be at least 1, or empty for all")
    if gold_per_annotator < 0:
        raise RecruitmentError("gold items per annotator cannot be negative")
    if not Item.objects.filter(study=study, is_gold=False).exists():
        raise RecruitmentError(f"study {study.slug!r} has no items to label yet")
    seed = int(np.random.SeedSequence().entropy % 2**62) if seed is None else int(seed)
    return Batch.objects.create(
        study=study,
        name=name,
        policy=policy,
        overlap_k=overlap_k,
        seed=seed,
        created_by=created_by,
        params={
            "annotators": [],
            "gold_per_annotator": gold_per_annotator,
            "recruitment": {"items_per_annotator": items_per_annotator},
        },
    )


def _batch_item_pool(batch: Batch):
    """A recruitment batch draws on all the study's non-gold items; any other batch on its own."""
    rows = Item.objects.filter(study_id=batch.study_id, is_gold=False)
    if "recruitment" not in (batch.params or {}):
        rows = rows.filter(assignments__batch=batch).distinct()
    return rows


def _reserved_groups(batch: Batch) -> set[str]:
    """Groups the batch recruits or already has: their matched items are kept for them."""
    groups = set(
        Assignment.objects.filter(batch=batch, is_active=True)
        .values_list("annotator__group", flat=True)
        .distinct()
    )
    groups |= set(batch.invite_links.values_list("group", flat=True))
    groups |= set(batch.panel_links.values_list("group", flat=True))
    return {g for g in groups if g}


def batch_enrol(*, batch: Batch, annotator: Annotator) -> int:
    """Give a newly recruited annotator their share of the batch, by the batch's policy.

    Runs inside the caller's transaction with the batch row locked, so recruits arriving at
    the same moment see each other's assignments and coverage stays balanced. Returns the
    number of assignments made; none at all is an error (nothing left for this group).
    """
    Batch.objects.select_for_update().filter(pk=batch.pk).first()
    rows = _batch_item_pool(batch).values_list("pk", "attribute_value__value", "needs_review")
    items = [policies.PolicyItem(pk, value, int(review)) for pk, value, review in rows]
    coverage = dict(
        Assignment.objects.filter(batch=batch, is_active=True)
        .values("item")
        .annotate(n=Count("id"))
        .values_list("item", "n")
    )
    own = set(Assignment.objects.filter(annotator=annotator).values_list("item_id", flat=True))
    rng = np.random.default_rng([batch.seed, annotator.pk])
    chosen = enrolment_items(
        items,
        coverage,
        policy=batch.policy,
        group=annotator.group,
        overlap_k=batch.overlap_k,
        rng=rng,
        quota=(batch.params or {}).get("recruitment", {}).get("items_per_annotator"),
        reserved_groups=_reserved_groups(batch),
        already_assigned=own,
    )
    if not chosen:
        group = f"group {annotator.group!r}" if annotator.group else "this annotator"
        raise RecruitmentError(f"Batch {batch.name!r} has no items left for {group}.")
    pairs = [(item, annotator.pk) for item in chosen]
    gold_n = int((batch.params or {}).get("gold_per_annotator", 0))
    if gold_n:
        gold = list(
            Item.objects.filter(study_id=batch.study_id, is_gold=True).values_list("pk", flat=True)
        )
        pool = [policies.PolicyAnnotator(annotator.pk, annotator.group)]
        existing = {(item, annotator.pk) for item in own}
        pairs += policies.gold_pairs(gold, pool, gold_n, rng, existing_pairs=existing)
    priority = {i.item: i.priority for i in items}
    positions = policies.queue_positions(pairs, priority, rng)
    Assignment.objects.bulk_create(
        Assignment(batch=batch, item_id=item, annotator_id=who, position=positions[(item, who)])
        for item, who in pairs
    )
    params = dict(batch.params or {})
    params["annotators"] = [*params.get("annotators", []), annotator.pk]
    Batch.objects.filter(pk=batch.pk).update(params=params)
    return len(pairs)


def _check_batch_takes_recruits(batch: Batch) -> None:
    if batch.policy not in (Batch.Policy.K_OVERLAP, Batch.Policy.EXPERTISE):
        raise RecruitmentError(
            f"batch {batch.name!r} uses the {batch.policy} policy; recruits need a "
            "k_overlap or expertise batch"
        )
    if consent_current(study_id=batch.study_id) is None:
        raise RecruitmentError(
            f"study {batch.study.slug!r} has no consent text yet: publish one first"
        )


# --- invite links --------------------------------------------------------------------------


def invite_links_create(
    *,
    batch: Batch,
    group: str,
    count: int = 1,
    days: float = DEFAULT_INVITE_DAYS,
    note: str = "",
    created_by=None,
) -> list[tuple[InviteLink, str]]:
    """Make ``count`` single-use links; returns (link, token) pairs. The tokens are not stored."""
    _check_batch_takes_recruits(batch)
    if not 1 <= count <= MAX_INVITES_PER_REQUEST:
        raise RecruitmentError(f"count must be between 1 and {MAX_INVITES_PER_REQUEST}")
    if not 0 < days <= MAX_INVITE_DAYS:
        raise RecruitmentError(f"links must expire within 1 to {MAX_INVITE_DAYS} days")
    expires_at = timezone.now() + timedelta(days=days)
    made = []
    with transaction.atomic():
        for _ in range(count):
            token = new_secret()
            link = InviteLink.objects.create(
                batch=batch,
                group=group.strip(),
                note=note.strip(),
                token_sha256=secret_digest(token),
                expires_at=expires_at,
                created_by=created_by,
            )
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


def invite_redeem(*, token: str, consent_id) -> tuple[Annotator, Batch]:
    """Use an invite: create the annotator in its group, record consent, enrol in its batch.

    The link is claimed by a conditional UPDATE inside the transaction, so two people opening
    one link at once cannot both get in; any refusal rolls everything back.
    """
    link, state = invite_lookup(token=token)
    if not state.usable:
        raise RecruitmentError(state.reason)
    now = timezone.now()
    with transaction.atomic():
        claimed = InviteLink.objects.filter(
            pk=link.pk, used_at__isnull=True, revoked_at__isnull=True, expires_at__gt=now
        ).update(used_at=now)
        if not claimed:
            raise RecruitmentError(invite_lookup(token=token)[1].reason or UNKNOWN_INVITE.reason)
        consent = consent_shown(study=link.batch.study, consent_id=consent_id)
        annotator = services.annotator_create(username=f"invite-{link.pk}", group=link.group)
        InviteLink.objects.filter(pk=link.pk).update(annotator=annotator)
        consent_record(annotator=annotator, consent=consent)
        batch_enrol(batch=link.batch, annotator=annotator)
    return annotator, link.batch


# --- panel links ---------------------------------------------------------------------------


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
    _check_batch_takes_recruits(batch)
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
        raise RecruitmentError("This study link is closed to new participants.")
    browser_key = new_secret()
    now = timezone.now()
    try:
        with transaction.atomic():
            consent = consent_shown(study=link.batch.study, consent_id=consent_id)
            annotator = services.annotator_create(
                username=f"panel-{link.pk}-{entry.participant_id}"[:150], group=link.group
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
        raise RecruitmentError("This participant id is already enrolled in this study.") from None
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
            "This participant id already took part in this study through another link."
        )
    same_account = getattr(user, "pk", None) == participant.annotator.user_id
    key_matches = bool(browser_key) and participant.browser_key_sha256 == secret_digest(browser_key)
    new_key = None
    if not participant.browser_key_sha256:
        new_key = new_secret()
    elif not (same_account or key_matches):
        raise RecruitmentError(
            "This participant id has already started this study in another browser: continue "
            "there, or ask the researcher to release it."
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


# --- staff reads ---------------------------------------------------------------------------


def recruitment_overview(*, study: Study) -> dict:
    """What the staff recruitment page lists, in a fixed number of queries."""
    batches = list(study.batches.order_by("-created_at"))
    invites = list(
        InviteLink.objects.filter(batch__study=study)
        .select_related("batch", "annotator__user")
        .order_by("-created_at")
    )
    now = timezone.now()
    invite_rows = [
        (
            link,
            invite_state(
                expires_at=link.expires_at,
                used_at=link.used_at,
                revoked_at=link.revoked_at,
                now=now,
            ),
        )
        for link in invites
    ]
    panels = list(
        PanelLink.objects.filter(batch__study=study)
        .select_related("batch")
        .annotate(
            n_participants=Count("participants"),
            n_completed=Count("participants", filter=Q(participants__completed_at__isnull=False)),
        )
    )
    participants = list(
        PanelParticipant.objects.filter(study=study)
        .select_related("panel_link", "annotator__user")
        .order_by("-enrolled_at")[:200]
    )
    return {
        "consent": consent_current(study_id=study.pk),
        "n_consent_records": ConsentRecord.objects.filter(study=study).count(),
        "batches": batches,
        "invite_rows": invite_rows,
        "panel_links": panels,
        "participants": participants,
    }

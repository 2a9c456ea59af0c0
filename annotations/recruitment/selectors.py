"""Recruitment reads for the staff page, in a fixed number of queries."""

from __future__ import annotations

from django.db.models import Count, Q
from django.utils import timezone

from ..common.study_address import study_addresses_split
from ..models import Batch, Study
from .consent import consent_current
from .models import ConsentRecord, InviteLink, PanelLink, PanelParticipant, StudyConsent
from .rules import ENROLMENT_POLICIES, invite_state

PEOPLE_INVITES_SHOWN = 200


def recruitment_overview(*, study: Study) -> dict:
    """What the staff recruitment page lists, in a fixed number of queries."""
    batches = list(study.batches.order_by("-created_at"))
    invites = (
        InviteLink.objects.filter(batch__study=study)
        .select_related("batch", "annotator__user")
        .order_by("-created_at")
    )
    invite_rows = _with_states(invites)
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


def _with_states(invites) -> list[tuple[InviteLink, object]]:
    now = timezone.now()
    return [
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


def people_invites_overview() -> dict:
    """What the People page's invite section reads: the batches recruits can join (studies
    with a published consent), the studies still without one, and the newest invites."""
    with_consent = set(StudyConsent.objects.values_list("study_id", flat=True).distinct())
    batches = list(
        Batch.objects.filter(policy__in=ENROLMENT_POLICIES, study_id__in=with_consent)
        .select_related("study")
        .order_by("study__name", "-created_at")
    )
    invites = InviteLink.objects.select_related("batch__study", "annotator__user").order_by(
        "-created_at"
    )[:PEOPLE_INVITES_SHOWN]
    # Studies under an address no page can open are left out here (the page lists them apart).
    return {
        "invite_batches": batches,
        "studies_without_consent": study_addresses_split(
            Study.objects.exclude(pk__in=with_consent).order_by("name")
        )[0],
        "studies_without_batch": study_addresses_split(
            Study.objects.filter(pk__in=with_consent)
            .exclude(pk__in={batch.study_id for batch in batches})
            .order_by("name")
        )[0],
        "invite_rows": _with_states(invites),
    }

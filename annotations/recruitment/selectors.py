"""Recruitment reads for the staff page, in a fixed number of queries."""

from __future__ import annotations

from django.db.models import Count, Q
from django.utils import timezone

from ..models import Study
from .consent import consent_current
from .models import ConsentRecord, InviteLink, PanelLink, PanelParticipant
from .rules import invite_state


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

"""Staff recruitment page: publish consent, make recruitment batches, invite links and panel
links, revoke and close them, release a participant's browser binding.

Staff only (403 otherwise); a refused form re-renders the page with one line and changes nothing.
"""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from annotations.common.permissions import staff_required

from ..models import Study
from . import enrolment, invites, panels
from .consent import consent_current, consent_publish
from .forms import ConsentPublishForm, InviteCreateForm, PanelLinkForm, RecruitmentBatchForm
from .models import InviteLink, PanelLink, PanelParticipant
from .rules import PanelParams, RecruitmentError
from .selectors import recruitment_overview


def _staff_context(request, study, **extra):
    overview = recruitment_overview(study=study)
    for link in overview["panel_links"]:
        # Prolific's placeholder syntax, {{%NAME%}}, which the panel fills in per participant.
        query = "&".join(
            f"{name}={{{{%{name}%}}}}"
            for name in (link.participant_param, link.study_param, link.session_param)
        )
        entry = reverse("recruitment:panel_entry", args=[link.slug])
        link.study_url = f"{request.build_absolute_uri(entry)}?{query}"
    forms = {
        "consent_form": ConsentPublishForm(
            initial={
                "consent_text": overview["consent"].consent_text if overview["consent"] else "",
                "instructions": overview["consent"].instructions if overview["consent"] else "",
            }
        ),
        "batch_form": RecruitmentBatchForm(),
        "invite_form": InviteCreateForm(study=study),
        "panel_form": PanelLinkForm(study=study),
    }
    return {"study": study, **overview, **forms, **extra}


def _study(slug):
    return get_object_or_404(Study, slug=slug)


@staff_required
@require_GET
def staff_recruitment(request, slug: str):
    study = _study(slug)
    return render(request, "recruitment/staff.html", _staff_context(request, study))


def _staff_form_post(request, study, form_key, form, action):
    """Validate, run ``action(cleaned_data)``; a refusal re-renders the page with one line."""
    if form.is_valid():
        try:
            result = action(form.cleaned_data)
        except RecruitmentError as exc:
            form.add_error(None, str(exc))
        else:
            return result
    context = _staff_context(request, study, **{form_key: form})
    return render(request, "recruitment/staff.html", context, status=400)


@staff_required
@require_POST
def staff_consent_publish(request, slug: str):
    study = _study(slug)

    def publish(data):
        before = consent_current(study_id=study.pk)
        consent = consent_publish(study=study, created_by=request.user, **data)
        if before is not None and consent.pk == before.pk:
            # The current text again (a resubmitted form): no version annotators must re-agree to.
            messages.info(request, f"Consent version {consent.version} already has this text.")
        else:
            messages.success(request, f"Consent version {consent.version} published.")
        return redirect("recruitment:staff_page", slug=slug)

    return _staff_form_post(
        request, study, "consent_form", ConsentPublishForm(request.POST), publish
    )


@staff_required
@require_POST
def staff_batch_create(request, slug: str):
    study = _study(slug)

    def create(data):
        batch = enrolment.recruitment_batch_create(study=study, created_by=request.user, **data)
        messages.success(request, f"Recruitment batch {batch.name!r} created; recruits join it.")
        return redirect("recruitment:staff_page", slug=slug)

    return _staff_form_post(
        request, study, "batch_form", RecruitmentBatchForm(request.POST), create
    )


@staff_required
@require_POST
@never_cache  # the answer shows the only copy of fresh invite links: no cache may keep it
def staff_invites_create(request, slug: str):
    study = _study(slug)

    def create(data):
        made = invites.invite_links_create(created_by=request.user, **data)
        # The tokens are not stored: this page is the only time the links can be copied.
        urls = [
            request.build_absolute_uri(reverse("recruitment:invite", args=[token]))
            for _, token in made
        ]
        context = _staff_context(request, study, new_invite_urls=urls)
        return render(request, "recruitment/staff.html", context)

    form = InviteCreateForm(request.POST, study=study)
    return _staff_form_post(request, study, "invite_form", form, create)


@staff_required
@require_POST
def staff_invite_revoke(request, pk: int):
    link = get_object_or_404(InviteLink.objects.select_related("batch__study"), pk=pk)
    if invites.invite_revoke(link=link):
        messages.success(request, f"Invite {link.pk} revoked.")
    else:
        messages.error(request, f"Nothing changed: invite {link.pk} was already used or revoked.")
    return redirect("recruitment:staff_page", slug=link.batch.study.slug)


@staff_required
@require_POST
def staff_panel_link_create(request, slug: str):
    study = _study(slug)

    def create(data):
        params = PanelParams(
            participant=data.pop("participant_param"),
            study=data.pop("study_param"),
            session=data.pop("session_param"),
            expected_study_id=data.pop("expected_study_id"),
        )
        link = panels.panel_link_create(params=params, created_by=request.user, **data)
        messages.success(request, f"Panel link {link.name!r} created.")
        return redirect("recruitment:staff_page", slug=slug)

    form = PanelLinkForm(request.POST, study=study)
    return _staff_form_post(request, study, "panel_form", form, create)


@staff_required
@require_POST
def staff_panel_link_close(request, pk: int):
    link = get_object_or_404(PanelLink.objects.select_related("batch__study"), pk=pk)
    panels.panel_link_close(link=link)
    messages.success(request, f"Panel link {link.name!r} closed to new participants.")
    return redirect("recruitment:staff_page", slug=link.batch.study.slug)


@staff_required
@require_POST
def staff_participant_release(request, pk: int):
    participant = get_object_or_404(PanelParticipant.objects.select_related("study"), pk=pk)
    panels.panel_participant_release(participant=participant)
    messages.success(
        request,
        f"Participant {participant.participant_id} released: their next visit binds that browser.",
    )
    return redirect("recruitment:staff_page", slug=participant.study.slug)

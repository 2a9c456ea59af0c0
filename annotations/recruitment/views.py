"""Recruitment pages for the people who arrive: invite links, panel (Prolific-style) study links,
the consent page and the completion step; and the consent gate the survey calls.

Views are thin: parse, call one service, render. Every refusal is one line on a page of its
own and changes nothing. The threat model for panel links is in docs/annotation.md.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext, gettext_noop
from django.views.decorators.http import require_GET, require_http_methods
from django_htmx.http import HttpResponseClientRedirect

from ..selectors import annotator_for_user, batch_for_annotator
from . import invites, panels
from .consent import (
    consent_current,
    consent_last_agreed,
    consent_pending,
    consent_record,
    consent_shown,
)
from .models import PanelLink, PanelParticipant
from .rules import RecruitmentError, parse_panel_entry

# The authentication backend used for people who arrive by link (they have no password).
LINK_LOGIN_BACKEND = "annotations.common.auth.UserWithAnnotatorBackend"
# Studies whose consent this session has seen done (or not needed): the survey's pages then
# check consent without a query. A version published later is still asked before the next
# answer: the answer service checks the current version on every answer (``ConsentPending``),
# and ``consent_asked`` then forgets the study here and shows the consent page.
CONSENT_SESSION_KEY = "recruitment_consent_ok"
PANEL_COOKIE_DAYS = 60


def message_for_person(error: RecruitmentError) -> str:
    """The refusal in the language of the page (rules.RecruitmentError keeps it untranslated)."""
    message = gettext(error.message)
    return message % error.params if error.params else message


def _refused(request, error: RecruitmentError, status: int):
    reason = message_for_person(error)
    return render(request, "recruitment/refused.html", {"reason": reason}, status=status)


def _agreed(request) -> bool:
    return request.POST.get("agree") == "yes"


def _start(request, annotator, batch_id: int):
    """Log the link's person in and send them to their first item."""
    login(request, annotator.user, backend=LINK_LOGIN_BACKEND)
    request.session[CONSENT_SESSION_KEY] = []
    url = reverse("annotations:batch_next", args=[batch_id])
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


# --- consent gate used by the survey views -------------------------------------------------


def consent_gate(request, *, annotator, batch_id: int, study_id: int):
    """A redirect to the consent page if this annotator has not agreed yet; else None.

    Costs no query once the session knows the study is done (the survey's query counts are
    pinned in tests/annotations/test_query_counts.py).
    """
    done = request.session.get(CONSENT_SESSION_KEY, [])
    if study_id in done:
        return None
    if consent_pending(annotator=annotator, study_id=study_id) is None:
        request.session[CONSENT_SESSION_KEY] = [*done, study_id]
        return None
    return _consent_redirect(request, batch_id)


def consent_asked(request, *, batch_id: int, study_id: int):
    """The consent page, when an answer was refused for a consent version not agreed yet (one
    published while this session was open); the study is forgotten as done for this session."""
    done = request.session.get(CONSENT_SESSION_KEY, [])
    if study_id in done:
        request.session[CONSENT_SESSION_KEY] = [s for s in done if s != study_id]
    return _consent_redirect(request, batch_id)


def _consent_redirect(request, batch_id: int):
    url = reverse("recruitment:consent", args=[batch_id])
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


@login_required
@require_http_methods(["GET", "POST"])
def consent_page(request, batch_id: int):
    """Consent for an annotator who already has an account (made by staff)."""
    annotator = annotator_for_user(request.user)
    batch = batch_for_annotator(annotator=annotator, batch_id=batch_id)
    consent = consent_pending(annotator=annotator, study_id=batch.study_id)
    if consent is None:
        return redirect("annotations:batch_next", batch_id=batch.pk)
    error = ""
    if request.method == "POST":
        if _agreed(request):
            try:
                consent_record(
                    annotator=annotator,
                    consent=consent_shown(
                        study=batch.study, consent_id=request.POST.get("consent_id")
                    ),
                )
            except RecruitmentError as exc:
                return _refused(request, exc, 400)
            return redirect("annotations:batch_next", batch_id=batch.pk)
        error = gettext("Tick the box to agree before you start.")
    context = {
        "consent": consent,
        "batch": batch,
        "study": batch.study,
        "error": error,
        # Agreed to an earlier version: the page says the text changed.
        "agreed_version": consent_last_agreed(annotator=annotator, study_id=batch.study_id),
    }
    return render(request, "recruitment/consent.html", context, status=400 if error else 200)


# --- invite links --------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
def invite_open(request, token: str):
    """GET shows the consent page (a link preview or scanner uses nothing); POST redeems."""
    link, state = invites.invite_lookup(token=token)
    if not state.usable:
        return _refused(request, state.error(), 404 if link is None else 410)
    consent = consent_current(study_id=link.batch.study_id)
    language = _invite_language(request, link)
    error = ""
    if request.method == "POST":
        if _agreed(request):
            try:
                annotator, batch = invites.invite_redeem(
                    token=token, consent_id=request.POST.get("consent_id"), language=language
                )
            except RecruitmentError as exc:
                return _refused(request, exc, 409)
            return _start(request, annotator, batch.pk)
        error = gettext("Tick the box to agree before you start.")
    context = {
        "consent": consent,
        "batch": link.batch,
        "study": link.batch.study,
        "error": error,
    }
    return render(request, "recruitment/consent.html", context, status=400 if error else 200)


def _invite_language(request, link) -> str:
    """The person's own choice (the switcher's cookie) first, then the language staff chose
    for the invite; activated for this page and returned to be saved on the new annotator.
    Empty when neither is set: the page follows the browser, and so will the survey."""
    codes = [code for code, _ in settings.LANGUAGES]
    chosen = request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME, "")
    language = chosen if chosen in codes else link.language if link.language in codes else ""
    if language:
        translation.activate(language)
        request.LANGUAGE_CODE = language
    return language


# --- panel links ---------------------------------------------------------------------------


def _panel_cookie(link: PanelLink) -> str:
    return f"acrb_panel_{link.pk}"


@require_http_methods(["GET", "POST"])
def panel_entry(request, slug: str):
    """The study link given to the panel: enrol once (after consent), resume afterwards.

    Whoever holds the link cannot tell an enrolled participant id from a new one: a visit that
    may not resume that id (another browser, another link) gets the same answer as a new id,
    the consent page (or the closed-link refusal); only agreeing then says the id is taken, and
    agreeing with a new id enrols it, which staff see (docs/annotation.md, threat model).
    """
    link = get_object_or_404(PanelLink.objects.select_related("batch__study"), slug=slug)
    params = panels.panel_params(link)
    try:
        entry = parse_panel_entry(request.GET if request.method == "GET" else request.POST, params)
    except RecruitmentError as exc:
        return _refused(request, exc, 400)
    participant = panels.panel_participant_find(link=link, participant_id=entry.participant_id)
    taken = None  # why this visit may not use an enrolled id (kept until the person agrees)
    if participant is not None:
        try:
            return _panel_resume(request, link, participant)
        except RecruitmentError as exc:
            taken = exc
    if link.closed_at is not None:
        error = RecruitmentError(gettext_noop("This study link is closed to new participants."))
        return _refused(request, error, 410)
    error = ""
    if request.method == "POST":
        if _agreed(request):
            if taken is not None:
                return _refused(request, taken, 403)
            try:
                participant, key = panels.panel_enrol(
                    link=link, entry=entry, consent_id=request.POST.get("consent_id")
                )
            except RecruitmentError as exc:
                return _refused(request, exc, 409)
            response = _start(request, participant.annotator, link.batch_id)
            _set_panel_cookie(response, link, key, request)
            return response
        error = gettext("Tick the box to agree before you start.")
    context = {
        "consent": consent_current(study_id=link.batch.study_id),
        "batch": link.batch,
        "study": link.batch.study,
        "hidden": [
            (params.participant, entry.participant_id),
            (params.study, entry.study_id),
            (params.session, entry.session_id),
        ],
        "error": error,
    }
    return render(request, "recruitment/consent.html", context, status=400 if error else 200)


def _panel_resume(request, link, participant: PanelParticipant):
    """Back into their queue; ``RecruitmentError`` (changing nothing) when this visit may not."""
    new_key = panels.panel_resume(
        participant=participant,
        link=link,
        browser_key=request.COOKIES.get(_panel_cookie(link)),
        user=request.user,
    )
    response = _start(request, participant.annotator, link.batch_id)
    if new_key:
        _set_panel_cookie(response, link, new_key, request)
    return response


def _set_panel_cookie(response, link, key: str, request) -> None:
    # HttpOnly: page scripts cannot read it; SameSite=Lax: sent when the panel's site opens
    # the link (a top-level navigation), not on cross-site form posts.
    response.set_cookie(
        _panel_cookie(link),
        key,
        max_age=PANEL_COOKIE_DAYS * 24 * 3600,
        path=reverse("recruitment:panel_entry", args=[link.slug]),
        secure=request.is_secure(),
        httponly=True,
        samesite="Lax",
    )


def panel_completion_redirect(request, *, annotator, batch_id: int):
    """For the survey's end of batch: a panel participant goes to the completion step."""
    participant = panels.panel_participant_for(annotator=annotator, batch_id=batch_id)
    if participant is None:
        return None
    return redirect("recruitment:panel_complete", batch_id=batch_id)


@login_required
@require_GET
def panel_complete(request, batch_id: int):
    annotator = annotator_for_user(request.user)
    participant = annotator and panels.panel_participant_for(annotator=annotator, batch_id=batch_id)
    if not participant:
        error = RecruitmentError(gettext_noop("There is no panel completion for this batch."))
        return _refused(request, error, 404)
    if not panels.panel_complete(participant=participant):
        return redirect("annotations:batch_next", batch_id=batch_id)
    link = participant.panel_link
    if link.completion_url:
        return redirect(link.completion_url)
    return render(request, "recruitment/complete.html", {"link": link})

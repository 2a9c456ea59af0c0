"""Staff pages: annotator accounts (docs/annotation.md, "People: annotator accounts").

Create accounts, invite people by link, reset an annotator's access, pause and resume them. A
password or an invite link is shown once, on the answer to the POST that made it, never stored
in a message or a URL.
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from annotations.common.form_keys import OneTimeKeyForm
from annotations.common.permissions import staff_required
from annotations.common.study_address import study_addresses_split
from annotations.models import Annotator, Study
from annotations.qualification import status as qualification
from annotations.quality import actions as quality_actions
from annotations.recruitment import invites as recruitment_invites
from annotations.recruitment.forms import PeopleInviteForm
from annotations.recruitment.rules import RecruitmentError
from annotations.recruitment.selectors import people_invites_overview
from annotations.staff import people


class AnnotatorAccountsForm(OneTimeKeyForm):
    usernames = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4, "placeholder": "ana\nbola"}),
        label="User names",
        help_text="One per line (or separated by commas). Letters, digits and @ . + - _.",
    )
    group = forms.CharField(
        max_length=100, required=False, help_text="e.g. Nigerian: expertise-matched batches use it."
    )
    expertise = forms.CharField(max_length=200, required=False)


class PauseForm(forms.Form):
    reason = forms.CharField(max_length=2000, required=False, label="Reason (optional)")


def _list_page(request, form, status=200, *, invite_form=None, new_invites=(), template=None):
    overview = people_invites_overview()
    context = {
        "form": form,
        "invite_form": invite_form or PeopleInviteForm(batches=overview["invite_batches"]),
        "new_invites": new_invites,
        **overview,
    }
    if template is None:  # the whole page; the invites fragment needs none of this
        annotators = list(people.annotator_list())
        # Each annotator's qualification rounds (docs/annotation.md#qualification-round).
        rounds = qualification.people_rows()
        for annotator in annotators:
            annotator.qualification_rounds = rounds.get(annotator.pk, [])
        studies, unlinkable = study_addresses_split(Study.objects.order_by("name"))
        context |= {
            "annotators": annotators,
            "studies": studies,
            "unlinkable_studies": unlinkable,
            "pause_form": PauseForm(),
        }
    return render(request, template or "staff/people.html", context, status=status)


def _credentials_page(request, credentials, heading):
    # The views are never_cache (no-store): a password must not stay in a cache.
    response = render(
        request,
        "staff/people_credentials.html",
        {
            "credentials": credentials,
            "heading": heading,
            "login_url": request.build_absolute_uri(reverse("login")),
        },
    )
    return response


@staff_required
@require_GET
def people_list(request):
    return _list_page(request, AnnotatorAccountsForm())


@staff_required
@require_POST
@never_cache
def people_create(request):
    form = AnnotatorAccountsForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            made = people.annotator_accounts_create(
                usernames=people.usernames_parse(data["usernames"]),
                group=data["group"],
                expertise=data["expertise"],
                created_by=request.user,
                form_key=data["request_key"],
            )
        except ValidationError as invalid:
            for message in invalid.messages:
                form.add_error("usernames", message)
        else:
            return _credentials_page(request, made, f"{len(made)} annotator account(s) created")
    return _list_page(request, form, status=400)


@staff_required
@require_POST
@never_cache
def people_invites_create(request):
    """Invite links from the People page (the recruitment service makes them); the answer shows
    the new links once. htmx swaps the invite section; without JavaScript the whole page."""
    form = PeopleInviteForm(request.POST, batches=people_invites_overview()["invite_batches"])
    new_invites = []
    if form.is_valid():
        data = form.cleaned_data
        try:
            made = recruitment_invites.invite_links_create(
                batch=data["batch"],
                group=data["group"],
                count=data["count"],
                days=data["days"],
                note=data["invitee"],
                language=data["language"],
                request_key=data["request_key"],
                created_by=request.user,
            )
        except RecruitmentError as refused:
            form.add_error(None, str(refused))
        else:
            new_invites = [
                (link, request.build_absolute_uri(reverse("recruitment:invite", args=[token])))
                for link, token in made
            ]
    failed = bool(form.errors)
    template = "staff/people.html#invites" if request.htmx else None
    # htmx swaps only 2xx answers; a full-page answer says 400 when something is wrong.
    return _list_page(
        request,
        AnnotatorAccountsForm(),
        status=400 if failed and not request.htmx else 200,
        invite_form=form if failed else None,
        new_invites=new_invites,
        template=template,
    )


@staff_required
@require_POST
@never_cache
def annotator_access_reset(request, pk: int):
    annotator = get_object_or_404(Annotator.objects.select_related("user"), pk=pk)
    try:
        credentials = people.annotator_access_reset(annotator=annotator, reset_by=request.user)
    except ValidationError as invalid:
        messages.error(request, f"Nothing changed: {' '.join(invalid.messages)}")
        return redirect("staff:people")
    return _credentials_page(request, [credentials], f"Access of {annotator} reset")


def _pause_or_resume(request, pk: int, act, done: str):
    annotator = get_object_or_404(Annotator.objects.select_related("user"), pk=pk)
    form = PauseForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"{annotator}: nothing changed: {form.errors.as_text()}")
        return redirect("staff:people")
    try:
        review = act(annotator=annotator, user=request.user, reason=form.cleaned_data["reason"])
    except ValidationError as invalid:
        messages.error(request, f"Nothing changed: {' '.join(invalid.messages)}")
    else:
        moved = (
            f" ({review.moved_assignments} open item(s) handed on)"
            if review.moved_assignments
            else ""
        )
        messages.success(request, f"{annotator} {done}{moved}.")
    return redirect("staff:people")


@staff_required
@require_POST
def annotator_pause(request, pk: int):
    return _pause_or_resume(request, pk, quality_actions.annotator_pause, "paused")


@staff_required
@require_POST
def annotator_resume(request, pk: int):
    return _pause_or_resume(request, pk, quality_actions.annotator_resume, "may work again")

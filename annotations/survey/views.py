"""The annotator survey: thin views over selectors and services.

Every view resolves objects through selectors that filter by the current annotator, so an
assignment, batch or image that is not theirs is a 404, not a page.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.forms.utils import ErrorDict
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from annotations import selectors, services
from annotations.adjudication import disputes as adjudication
from annotations.common.answers import answer_title
from annotations.common.media import image_response
from annotations.qualification import attempts as qualification_attempts
from annotations.qualification import status as qualification
from annotations.recruitment.views import (
    consent_asked,
    consent_gate,
    panel_completion_redirect,
)
from annotations.survey.forms import AnswerForm
from annotations.survey.language import language_codes


@login_required
@require_GET
def home(request):
    annotator = selectors.annotator_for_user(request.user)
    if annotator is None and request.user.is_staff:
        return redirect("staff:study_list")
    batches = selectors.annotator_batch_list(annotator=annotator) if annotator else []
    context = {
        "annotator": annotator,
        "batches": batches,
        # Each study once, for its guidelines and "my answers" links (the batches loaded it).
        "studies": list({batch.study_id: batch.study for batch, _ in batches}.values()),
        "adjudicated_studies": adjudication.adjudicated_studies(annotator=annotator),
    }
    return render(request, "annotations/home.html", context)


@login_required
@require_GET
def guidelines(request):
    return render(request, "annotations/guidelines.html")


@login_required
@require_GET
def my_answers(request, slug: str):
    """The annotator's own answers in one study, a page at a time (docs/annotation.md)."""
    annotator = selectors.annotator_for_user(request.user)
    study = selectors.study_for_annotator(annotator=annotator, slug=slug)
    page = selectors.annotator_answer_page(
        annotator=annotator, study=study, page_number=request.GET.get("page")
    )
    for annotation in page:
        annotation.answer_title = answer_title(annotation)
    return render(request, "annotations/my_answers.html", {"study": study, "page": page})


@login_required
@require_GET
def batch_next(request, batch_id: int):
    annotator = selectors.annotator_for_user(request.user)
    # The common case in one light query: an open item of the annotator's proves the batch is
    # theirs, and a batch without a qualification round has no gate but consent.
    head = (
        selectors.assignment_queue_peek(annotator=annotator, batch_id=batch_id, size=1)
        if annotator
        else []
    )
    if head and not head[0].batch__qualification_items:
        first = head[0]
        if gate := consent_gate(
            request, annotator=annotator, batch_id=batch_id, study_id=first.batch__study_id
        ):
            return gate
        return redirect("annotations:assignment", pk=first.pk)
    batch = selectors.batch_for_annotator(annotator=annotator, batch_id=batch_id)
    if gate := consent_gate(
        request, annotator=annotator, batch_id=batch.pk, study_id=batch.study_id
    ):
        return gate
    if gate := _qualification_gate(annotator, batch):
        return gate
    assignment = selectors.assignment_next(annotator=annotator, batch_id=batch.pk)
    if assignment is None and batch.qualification_items:
        # A round whose last open items staff withdrew is scored on what was answered.
        if qualification_attempts.attempt_settle(batch=batch, annotator=annotator):
            return redirect("qualification:page", batch_id=batch.pk)
    if assignment is None:
        if done := panel_completion_redirect(request, annotator=annotator, batch_id=batch.pk):
            return done
        progress = selectors.batch_progress_for_annotator(annotator=annotator, batch_id=batch.pk)
        return render(
            request, "annotations/batch_done.html", {"batch": batch, "progress": progress}
        )
    return redirect("annotations:assignment", pk=assignment.pk)


def _qualification_gate(annotator, batch):
    """The qualification page (intro, or the last attempt's result) when the batch asks for a
    round the annotator has not passed and no attempt is running; None otherwise."""
    if not batch.qualification_items:
        return None
    state = qualification.annotator_state(batch=batch, annotator=annotator)
    if state.qualified or state.in_progress:
        return None
    return redirect("qualification:page", batch_id=batch.pk)


def _locked_gate(request, assignment):
    """Back to the batch's start (the qualification round) for a batch item the annotator may
    not see or answer yet: checked on the server for every page and POST."""
    if not qualification.batch_item_locked(assignment=assignment):
        return None
    url = reverse("annotations:batch_next", args=[assignment.batch_id])
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


def _consent_gate_for(request, annotator, assignment):
    """No item is shown or answered before the study's consent (docs/annotation.md)."""
    return consent_gate(
        request,
        annotator=annotator,
        batch_id=assignment.batch_id,
        study_id=assignment.batch.study_id,
    )


def _preload_item_id(row) -> int | None:
    """The item of a queue row (``selectors.assignment_queue_peek``) whose image the page asks
    the browser to fetch early: never a harmful control's, which is served only once opened."""
    if row is None or not row.item__image or row.item__intent == "harmful":
        return None
    return row.item_id


_UNKNOWN = object()


def survey_context(annotator, assignment, form=None, preload_item_id=_UNKNOWN):
    """What the survey page shows (reads only; the view records the serving first);
    ``preload_item_id`` (the item after this one, ``_preload_item_id``) when known."""
    # A qualification item's arrows and progress stay within its round.
    place = (
        selectors.assignment_queue_place(assignment=assignment)
        if assignment.qualification_attempt_id is None
        else selectors.qualification_place(assignment=assignment)
    )
    if preload_item_id is _UNKNOWN:
        head = selectors.assignment_queue_peek(annotator=annotator, batch_id=assignment.batch_id)
        preload_item_id = _preload_item_id(next((r for r in head if r.pk != assignment.pk), None))
    annotation = getattr(assignment, "annotation", None)
    attempt = assignment.qualification_attempt
    return {
        "assignment": assignment,
        "item": assignment.item,
        "study": assignment.batch.study,
        "form": form or AnswerForm.for_annotation(annotation),
        "annotation": annotation,
        "previous_id": place.previous_id,
        "next_id": place.next_id,
        # The image the annotator will most likely see next, for the browser to fetch early.
        "preload_item_id": preload_item_id,
        # A harmful control's image, prompt and answers wait behind its content warning.
        "hidden": assignment.item.intent == "harmful" and assignment.revealed_at is None,
        # The tab title's "Item 3/45": the item's 1-based place in the queue.
        "place": place,
        "progress": place.progress,
        # A qualification item says so: how many items, the pass mark, which attempt.
        "qualification": None
        if attempt is None
        else {
            "attempt": attempt.number,
            "items": assignment.batch.qualification_items,
            "pass_percent": round(100 * assignment.batch.qualification_pass_mark),
        },
    }


@login_required
@require_GET
def assignment_detail(request, pk: int):
    annotator = selectors.annotator_for_user(request.user)
    assignment = selectors.assignment_for_annotator(annotator=annotator, assignment_id=pk)
    if gate := _consent_gate_for(request, annotator, assignment) or _locked_gate(
        request, assignment
    ):
        return gate
    services.assignment_mark_served(assignment=assignment)
    template = "annotations/item.html#survey" if request.htmx else "annotations/item.html"
    return render(request, template, survey_context(annotator, assignment))


@login_required
@require_POST
def assignment_answer(request, pk: int):
    annotator, assignment, gate = _posted_assignment(request, pk)
    if gate:
        return gate
    form = AnswerForm(request.POST)
    if form.is_valid():
        try:
            services.annotation_submit(
                assignment=assignment,
                user=request.user,
                language=translation.get_language(),
                **form.submitted_answer(),
            )
        except services.ConsentPending:
            # A consent version published since this session checked: agree first.
            return consent_asked(
                request, batch_id=assignment.batch_id, study_id=assignment.batch.study_id
            )
        except ValidationError as exc:
            form.add_error(None, exc)
    if not form.is_valid():
        services.assignment_mark_served(assignment=assignment)
        return _item_with_errors(request, annotator, assignment, form)
    return _go_next(request, annotator, assignment)


@login_required
@require_POST
def assignment_skip(request, pk: int):
    annotator, assignment, gate = _posted_assignment(request, pk)
    if gate:
        return gate
    try:
        services.assignment_skip(assignment=assignment)
    except ValidationError as exc:
        form = AnswerForm()
        # An unbound form that shows the refusal: no field errors, one message.
        form.cleaned_data, form._errors = {}, ErrorDict()
        form.add_error(None, exc)
        return _item_with_errors(request, annotator, assignment, form)
    return _go_next(request, annotator, assignment)


def _item_with_errors(request, annotator, assignment, form):
    """The same item again with what was refused (400 for a plain form post, 200 for htmx)."""
    template = "annotations/item.html#survey" if request.htmx else "annotations/item.html"
    return render(
        request,
        template,
        survey_context(annotator, assignment, form),
        status=200 if request.htmx else 400,
    )


def _posted_assignment(request, pk: int):
    """The annotator and their assignment an answer, skip or decline is for, and the consent
    page to show first when the batch asks for consent not given yet (else None)."""
    annotator = selectors.annotator_for_user(request.user)
    assignment = selectors.assignment_for_annotator(
        annotator=annotator, assignment_id=pk, for_answer=True
    )
    gate = _consent_gate_for(request, annotator, assignment) or _locked_gate(request, assignment)
    return annotator, assignment, gate


@login_required
@require_POST
def assignment_decline(request, pk: int):
    """Decline a harmful control without penalty (docs/annotation.md, "Harmful controls")."""
    annotator, assignment, gate = _posted_assignment(request, pk)
    if gate:
        return gate
    try:
        services.assignment_decline_harmful(assignment=assignment)
    except ValidationError as exc:
        raise Http404(exc.messages[0]) from None
    return _go_next(request, annotator, assignment)


@login_required
@require_POST
def assignment_reveal(request, pk: int):
    """Open a harmful control's image and prompt behind its content warning, recorded on the
    assignment: its answer is taken only after this (docs/annotation.md, "Harmful controls")."""
    annotator, assignment, gate = _posted_assignment(request, pk)
    if gate:
        return gate
    try:
        services.assignment_reveal(assignment=assignment)
    except ValidationError as exc:
        raise Http404(exc.messages[0]) from None
    if not request.htmx:
        return redirect("annotations:assignment", pk=assignment.pk)
    assignment = selectors.assignment_for_annotator(annotator=annotator, assignment_id=pk)
    return render(request, "annotations/item.html#survey", survey_context(annotator, assignment))


def _go_next(request, annotator, assignment):
    """After an answer: the next unanswered item (htmx swaps it in place), or the batch's end;
    after a qualification round's last answer, its result."""
    if assignment.qualification_attempt_id is not None and qualification.attempt_finished(
        attempt_id=assignment.qualification_attempt_id
    ):
        url = reverse("qualification:page", args=[assignment.batch_id])
        return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
    # The next item's id; with htmx also the one after it, whose image the page preloads.
    head = selectors.assignment_queue_peek(
        annotator=annotator, batch_id=assignment.batch_id, size=2 if request.htmx else 1
    )
    if not head:
        url = reverse("annotations:batch_next", args=[assignment.batch_id])
        return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
    url = reverse("annotations:assignment", args=[head[0].pk])
    if not request.htmx:
        return redirect(url)
    upcoming = selectors.assignment_for_annotator(annotator=annotator, assignment_id=head[0].pk)
    services.assignment_mark_served(assignment=upcoming)
    preload = _preload_item_id(head[1] if len(head) > 1 else None)
    context = survey_context(annotator, upcoming, preload_item_id=preload)
    response = render(request, "annotations/item.html#survey", context)
    response["HX-Push-Url"] = url
    return response


@login_required
@require_GET
def item_image(request, pk: int, which: str = "image"):
    if which not in ("image", "source_image"):
        raise Http404("no such image")
    item = selectors.item_image_for_user(user=request.user, item_id=pk, which=which)
    return image_response(getattr(item, which))


@require_POST
def language_set(request):
    """The language switcher of the survey and consent pages: kept on the annotator's profile
    (when logged in) and in a cookie (before log-in: an invite or panel link's consent page)."""
    language = request.POST.get("language", "")
    next_url = request.POST.get("next", "")
    # Only a path on this site: no other host, no URL name, nothing past a sane length.
    if (
        not next_url.startswith("/")
        or len(next_url) > 2000
        or not url_has_allowed_host_and_scheme(
            next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        )
    ):
        next_url = reverse("annotations:home")
    if language not in language_codes():
        return HttpResponseRedirect(next_url)
    annotator = selectors.annotator_for_user(request.user)
    if annotator is not None:
        services.annotator_language_set(annotator=annotator, language=language)
    response = HttpResponseRedirect(next_url)
    response.set_cookie(
        settings.LANGUAGE_COOKIE_NAME,
        language,
        max_age=365 * 24 * 3600,
        secure=request.is_secure(),
        samesite="Lax",
    )
    return response

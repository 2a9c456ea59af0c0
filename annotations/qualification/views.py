"""The qualification round's pages: the annotator's intro and result page, and staff's two
actions on the batch page (docs/annotation.md#qualification-round). Thin: a selector or a
service each."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotations import selectors
from annotations.common.permissions import staff_required
from annotations.models import Annotator, Batch
from annotations.qualification import attempts, status
from annotations.recruitment.views import consent_gate


def _annotator_batch(request, batch_id):
    annotator = selectors.annotator_for_user(request.user)
    batch = selectors.batch_for_annotator(annotator=annotator, batch_id=batch_id)
    state = status.annotator_state(batch=batch, annotator=annotator)
    if state is None:
        raise Http404("this batch has no qualification round")
    return annotator, batch, state


@login_required
@require_GET
def qualification_page(request, batch_id: int):
    """Before an attempt: what the round is (items, pass mark, attempts). After one: its result,
    and a retry while attempts remain."""
    annotator, batch, state = _annotator_batch(request, batch_id)
    if gate := consent_gate(
        request, annotator=annotator, batch_id=batch.pk, study_id=batch.study_id
    ):
        return gate
    if state.in_progress:
        return redirect("annotations:batch_next", batch_id=batch.pk)
    context = {
        "batch": batch,
        "study": batch.study,
        "state": state,
        "pass_percent": round(100 * state.requirement.pass_mark),
        "score_percent": None
        if state.latest is None or state.latest.score is None
        else round(100 * state.latest.score),
        "next_attempt": len(state.attempts) + 1,
    }
    return render(request, "annotations/qualification.html", context)


@login_required
@require_POST
def qualification_start(request, batch_id: int):
    annotator, batch, state = _annotator_batch(request, batch_id)
    if gate := consent_gate(
        request, annotator=annotator, batch_id=batch.pk, study_id=batch.study_id
    ):
        return gate
    try:
        attempts.attempt_start(batch=batch, annotator=annotator)
    except ValidationError as exc:
        messages.error(request, exc.messages[0])
        return redirect("qualification:page", batch_id=batch.pk)
    return redirect("annotations:batch_next", batch_id=batch.pk)


def _staff_action(request, batch_id, annotator_id, act):
    batch = get_object_or_404(Batch, pk=batch_id)
    annotator = get_object_or_404(Annotator.objects.select_related("user"), pk=annotator_id)
    reason = request.POST.get("reason", "")
    try:
        done = act(batch, annotator, reason)
    except ValidationError as exc:
        messages.error(request, f"Nothing changed: {exc.messages[0]}")
    else:
        messages.success(request, done)
    return redirect("staff:batch_detail", pk=batch.pk)


@staff_required
@require_POST
def qualification_grant(request, batch_id: int, annotator_id: int):
    """Allow one more attempt: the form names the new total, so a repeated POST adds none."""
    try:
        total = int(request.POST.get("attempts_allowed", ""))
    except ValueError:
        messages.error(request, "Nothing changed: attempts_allowed must be a whole number.")
        return redirect("staff:batch_detail", pk=batch_id)

    def act(batch, annotator, reason):
        review = attempts.attempt_grant(
            batch=batch,
            annotator=annotator,
            attempts_allowed=total,
            user=request.user,
            reason=reason,
        )
        if review is None:
            return f"{annotator} already has {total} attempt(s); nothing changed."
        return f"{annotator} may now take {total} attempt(s) in all."

    return _staff_action(request, batch_id, annotator_id, act)


@staff_required
@require_POST
def qualification_override(request, batch_id: int, annotator_id: int):
    def act(batch, annotator, reason):
        review = attempts.qualification_override(
            batch=batch, annotator=annotator, user=request.user, reason=reason
        )
        if review is None:
            return f"{annotator} is already qualified; nothing changed."
        return f"{annotator} is qualified by staff: the batch's items are open to them."

    return _staff_action(request, batch_id, annotator_id, act)

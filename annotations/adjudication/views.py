"""The adjudicator's pages: the queue of disputed items and the unblinded view of one item
(docs/annotation.md#adjudication). Staff, or an annotator granted the study; anyone else gets
403, and an unknown study or an item of another study 404.

Thin: authenticate, validate, call ``annotations.adjudication.disputes``, render.
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from annotations.adjudication import disputes as adjudication
from annotations.labels import CUE_LABELS
from annotations.models import Study
from annotations.selectors import annotator_for_user

DECISIONS = [("refused", "hard refusal (no usable image)")] + [
    (label, f"not refused, cue {label}") for label in CUE_LABELS
]


class AdjudicationForm(forms.Form):
    label = forms.ChoiceField(choices=DECISIONS, widget=forms.RadioSelect, label="Final label")
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=5000,
        help_text="Why this label: kept with the decision.",
    )


def _study_for_adjudicator(request, slug: str) -> Study:
    study = get_object_or_404(Study, slug=slug)
    adjudication.check_adjudicator(user=request.user, study=study)
    return study


def _viewer(request):
    """The annotator whose own open items stay hidden from them; None for staff."""
    return None if request.user.is_staff else annotator_for_user(request.user)


@login_required
@require_GET
def adjudication_queue(request, slug: str):
    study = _study_for_adjudicator(request, slug)
    show_decided = request.GET.get("decided") == "1"
    queue = adjudication.adjudication_queue(
        study=study, include_decided=show_decided, viewer=_viewer(request)
    )
    context = {
        "study": study,
        "queue": queue[:200],
        "waiting": len(queue),
        "show_decided": show_decided,
    }
    return render(request, "annotations/adjudication_queue.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def adjudication_item(request, slug: str, item_pk: int):
    study = _study_for_adjudicator(request, slug)
    item = adjudication.item_for_adjudication(study=study, item_pk=item_pk, viewer=_viewer(request))
    form = AdjudicationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        label = form.cleaned_data["label"]
        try:
            adjudication.adjudication_record(
                item=item,
                hard_refusal=label == adjudication.REFUSED,
                cue_label=None if label == adjudication.REFUSED else label,
                reason=form.cleaned_data["reason"],
                user=request.user,
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, f"Recorded the final label of {item.item_id}.")
            following = adjudication.adjudication_queue(study=study, viewer=_viewer(request))
            if following:
                return redirect("adjudication:item", study.slug, following[0].item_pk)
            return redirect("adjudication:queue", study.slug)
    context = {"study": study, "item": item, "form": form, **adjudication.item_evidence(item=item)}
    status = 400 if form.errors else 200
    return render(request, "annotations/adjudication_item.html", context, status=status)

"""The annotator-quality pages of a study (staff): one table of every annotator, one page per
annotator with the actions a lead can take (docs/annotation.md#annotator-quality).

Thin: authenticate, validate, call ``annotations.quality.actions`` / ``annotations.adjudication.disputes``,
render. They live on the scoring side because the numbers are scoring statistics.
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotations.adjudication import disputes as adjudication
from annotations.common.permissions import staff_required
from annotations.models import AdjudicatorGrant, Annotator, Study
from annotations.quality import actions as quality
from scoring.quality.selectors import study_annotator_quality
from scoring.stats.annotator_quality import ANOMALY_SHARE


class ReasonForm(forms.Form):
    reason = forms.CharField(
        required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 2})
    )


class RequiredReasonForm(forms.Form):
    reason = forms.CharField(max_length=2000, widget=forms.Textarea(attrs={"rows": 2}))


@staff_required
@require_GET
def annotator_quality_list(request, slug: str):
    study = get_object_or_404(Study, slug=slug)
    context = {
        "study": study,
        "rows": study_annotator_quality(study=study),
        "anomaly_percent": round(100 * ANOMALY_SHARE),
    }
    return render(request, "scoring/annotator_quality.html", context)


@staff_required
@require_GET
def annotator_quality_detail(request, slug: str, pk: int):
    study = get_object_or_404(Study, slug=slug)
    rows = [r for r in study_annotator_quality(study=study) if r["annotator"].pk == pk]
    if not rows:
        raise_404()
    annotator = rows[0]["annotator"]
    context = {
        "study": study,
        "row": rows[0],
        "annotator": annotator,
        "reviews": quality.annotator_reviews(annotator=annotator),
        "is_adjudicator": AdjudicatorGrant.objects.filter(
            study=study, annotator=annotator
        ).exists(),
        "reason_form": ReasonForm(),
        "exclude_form": RequiredReasonForm(),
        "anomaly_percent": round(100 * ANOMALY_SHARE),
    }
    return render(request, "scoring/annotator_quality_detail.html", context)


def raise_404():
    raise Http404("no such annotator in this study")


ACTIONS = {
    "pause": (
        ReasonForm,
        lambda a, s, u, r: quality.annotator_pause(annotator=a, user=u, reason=r),
    ),
    "resume": (
        ReasonForm,
        lambda a, s, u, r: quality.annotator_resume(annotator=a, user=u, reason=r),
    ),
    "reassign": (
        ReasonForm,
        lambda a, s, u, r: quality.annotator_reassign(annotator=a, study=s, user=u),
    ),
    "exclude": (
        RequiredReasonForm,
        lambda a, s, u, r: quality.annotator_labels_exclude(annotator=a, study=s, user=u, reason=r),
    ),
    "include": (
        ReasonForm,
        lambda a, s, u, r: quality.annotator_labels_include(annotator=a, study=s, user=u, reason=r),
    ),
    "grant": (
        ReasonForm,
        lambda a, s, u, r: adjudication.adjudicator_grant(study=s, annotator=a, user=u),
    ),
    "revoke": (
        ReasonForm,
        lambda a, s, u, r: adjudication.adjudicator_revoke(study=s, annotator=a),
    ),
}


@staff_required
@require_POST
def annotator_action(request, slug: str, pk: int, action: str):
    study = get_object_or_404(Study, slug=slug)
    annotator = get_object_or_404(
        Annotator.objects.filter(assignments__item__study=study).distinct(), pk=pk
    )
    if action not in ACTIONS:
        raise_404()
    form_class, act = ACTIONS[action]
    form = form_class(request.POST)
    if not form.is_valid():
        messages.error(request, f"{action}: give a reason")
    else:
        try:
            act(annotator, study, request.user, form.cleaned_data["reason"])
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        else:
            messages.success(request, f"{annotator}: {action} done.")
    return redirect("quality:annotator", study.slug, annotator.pk)

"""Staff attach and remove the example items of a study's guidelines."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotations.common.permissions import staff_required
from annotations.guidelines import examples
from annotations.guidelines.forms import LabelExampleForm
from annotations.models import LabelExample, Study


def _page(request, study, form, status=200):
    context = {
        "study": study,
        "form": form,
        "answers": examples.label_examples_by_answer(study=study),
    }
    return render(request, "staff/guidelines.html", context, status=status)


@staff_required
@require_GET
def staff_guidelines(request, slug: str):
    study = get_object_or_404(Study, slug=slug)
    return _page(request, study, LabelExampleForm())


@staff_required
@require_POST
def staff_example_set(request, slug: str):
    study = get_object_or_404(Study, slug=slug)
    form = LabelExampleForm(request.POST)
    if form.is_valid():
        try:
            example = examples.label_example_set(
                study=study, user=request.user, **form.cleaned_data
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(
                request, f"{example.item.item_id} is now an example of “{example.label}”."
            )
            return redirect("guidelines:staff_page", slug=slug)
    return _page(request, study, form, status=400)


@staff_required
@require_POST
def staff_example_remove(request, pk: int):
    example = get_object_or_404(LabelExample.objects.select_related("study"), pk=pk)
    examples.label_example_remove(study=example.study, example_id=example.pk)
    messages.success(request, "Example removed.")
    return redirect("guidelines:staff_page", slug=example.study.slug)

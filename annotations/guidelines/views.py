"""The annotator's guidelines page for a study: each answer with its example images.

Reachable by staff (a preview) and by annotators who label in the study; anyone else gets a
404. Images load through ``annotations:item_image``, which checks the viewer may see them.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from annotations import selectors
from annotations.guidelines.examples import label_examples_by_answer
from annotations.models import Study


@login_required
@require_GET
def study_guidelines(request, slug: str):
    if request.user.is_staff:
        study = get_object_or_404(Study, slug=slug)
    else:
        annotator = selectors.annotator_for_user(request.user)
        study = selectors.study_for_annotator(annotator=annotator, slug=slug)
    context = {"study": study, "answers": label_examples_by_answer(study=study)}
    return render(request, "annotations/study_guidelines.html", context)

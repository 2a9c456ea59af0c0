"""Publish an edit job's accepted edits as the REFLECT images of the same face set (the button
on the face-set QC page, generation's templates/generation/face_set_detail.html)."""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from annotations.common.permissions import staff_required
from generation.models import FaceSet
from scoring.reflect import services
from scoring.report.display import counted


@staff_required
@require_POST
def face_set_publish(request, slug: str):
    face_set = get_object_or_404(FaceSet, slug=slug)
    try:
        result = services.face_set_publish(face_set=face_set)
    except ValueError as error:
        messages.error(request, f"Nothing was published. {error}")
        return redirect("generation:face_set_detail", slug=slug)
    left_out = len(result["skipped"])
    skipped = f"; {counted(left_out, 'incomplete template')} left out" if left_out else ""
    messages.success(
        request,
        f"Published {counted(result['templates'], 'template')} "
        f"({counted(result['images'], 'image')}){skipped}.",
    )
    return redirect("reflect:face_set_detail", slug=slug)

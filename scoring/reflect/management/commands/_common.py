"""Shared argument helpers of the REFLECT commands."""

from django.core.management.base import CommandError

from generation.models import FaceSet


def face_set_or_error(name: str) -> FaceSet:
    """By name or slug; a clear error listing the known sets otherwise."""
    face_set = (
        FaceSet.objects.filter(name=name).first() or FaceSet.objects.filter(slug=name).first()
    )
    if face_set is None:
        known = ", ".join(FaceSet.objects.values_list("name", flat=True)[:20]) or "none"
        raise CommandError(f"unknown face set {name!r} (known: {known})")
    return face_set

"""Helpers of management commands, shared by every app's commands (annotations is the
bottom layer; docs/architecture.md)."""

from django.core.management.base import CommandError

from annotations.models import Study


def study_or_error(slug: str) -> Study:
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        known = ", ".join(Study.objects.values_list("slug", flat=True)[:20]) or "none"
        raise CommandError(f"unknown study {slug!r} (known: {known})")
    return study

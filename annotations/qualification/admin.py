"""Admin views of the qualification tables: read-only, because attempts and staff decisions
are evidence; staff act on the batch page (docs/annotation.md#qualification-round)."""

from django.contrib import admin

from annotations.recruitment.admin import ReadOnlyAdmin

from .models import QualificationAttempt, QualificationReview


@admin.register(QualificationAttempt)
class QualificationAttemptAdmin(ReadOnlyAdmin):
    list_display = [
        "batch",
        "annotator",
        "number",
        "started_at",
        "finished_at",
        "passed",
        "correct",
    ]
    list_filter = ["batch__study", "passed"]


@admin.register(QualificationReview)
class QualificationReviewAdmin(ReadOnlyAdmin):
    list_display = ["batch", "annotator", "action", "attempts_allowed", "acted_by", "acted_at"]
    list_filter = ["batch__study", "action"]

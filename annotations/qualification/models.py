"""The qualification round's tables (docs/annotation.md#qualification-round).

Kept apart from annotations/models.py like the recruitment tables: they name the other tables
by label, so annotations/models.py can import this module at the top. A batch's requirement
lives on the batch (``Batch.qualification_items`` and its siblings); the items of an attempt
are ordinary assignments of the batch that point at their attempt.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q


class QualificationAttempt(models.Model):
    """One annotator's try at a batch's qualification round. Its gold items are assignments
    pointing here; the result is written once, in the transaction of the last answer, and the
    answers cannot be changed after that."""

    batch = models.ForeignKey(
        "annotations.Batch", on_delete=models.CASCADE, related_name="qualification_attempts"
    )
    annotator = models.ForeignKey(
        "annotations.Annotator", on_delete=models.CASCADE, related_name="qualification_attempts"
    )
    number = models.PositiveSmallIntegerField()
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True, editable=False)
    # Gold answers that matched the gold label, of those answered (labels.gold_correct).
    correct = models.PositiveSmallIntegerField(null=True, blank=True, editable=False)
    answered = models.PositiveSmallIntegerField(null=True, blank=True, editable=False)
    passed = models.BooleanField(null=True, blank=True, editable=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["batch", "annotator", "number"], name="one_qualification_attempt_number"
            ),
            models.CheckConstraint(
                condition=Q(finished_at__isnull=True, passed__isnull=True)
                | Q(finished_at__isnull=False, passed__isnull=False, answered__isnull=False),
                name="finished_attempt_has_result",
            ),
        ]
        ordering = ["batch", "annotator", "number"]

    @property
    def score(self) -> float | None:
        return self.correct / self.answered if self.answered else None

    def __str__(self):
        return f"qualification attempt {self.number} of {self.annotator} on {self.batch}"


class QualificationReview(models.Model):
    """What staff decided about an annotator's qualification: one row per action, only ever
    added (like ItemReview): another attempt allowed, or the annotator qualified without passing."""

    class Action(models.TextChoices):
        GRANT_ATTEMPT = "grant_attempt", "allowed another attempt"
        OVERRIDE = "override", "qualified without passing"

    batch = models.ForeignKey(
        "annotations.Batch", on_delete=models.CASCADE, related_name="qualification_reviews"
    )
    annotator = models.ForeignKey(
        "annotations.Annotator", on_delete=models.CASCADE, related_name="qualification_reviews"
    )
    action = models.CharField(max_length=20, choices=Action.choices)
    # For a grant: how many attempts the annotator has in all from now on.
    attempts_allowed = models.PositiveSmallIntegerField(null=True, blank=True)
    reason = models.TextField(blank=True)
    acted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    acted_at = models.DateTimeField()

    class Meta:
        ordering = ["-acted_at", "-id"]

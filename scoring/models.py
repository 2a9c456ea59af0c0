"""Scoring runs, the judges' response cache and calibrated refusal thresholds.

The judgments themselves are ``annotations.AutomatedJudgment`` rows (one per item, judge and
judge version); this app adds what it takes to produce them:

- ``JudgeResponse``: the database store behind ``scoring.judges.cache`` (one row per cache key),
  so re-running a study scores only what changed.
- ``ScoringBatch``: one Celery task's share of a scoring job. Its ``done_items`` is *set*, never
  incremented, so a redelivered task cannot count its items twice; the job's progress is the
  sum over its batches.
- ``RefusalThreshold``: τ chosen from human labels for one study, judge and generator, with
  the ROC points it came from. Rows are only added; the newest per generator wins.
"""

from django.db import models

from annotations.models import BackgroundJob, Study


class JudgeResponse(models.Model):
    key = models.CharField(max_length=64, unique=True)
    judge = models.CharField(max_length=100)
    judge_version = models.CharField(max_length=100)
    response = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["judge", "judge_version"])]

    def __str__(self):
        return f"{self.judge}@{self.judge_version} {self.key[:12]}"


class ScoringBatch(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        DONE = "done"
        FAILED = "failed"

    job = models.ForeignKey(BackgroundJob, on_delete=models.CASCADE, related_name="scoring_batches")
    index = models.PositiveIntegerField()
    item_ids = models.JSONField(help_text="Primary keys of the items this batch scores.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    done_items = models.PositiveIntegerField(default=0)
    error_items = models.PositiveIntegerField(default=0)
    attempts = models.PositiveIntegerField(
        default=0, help_text="Deliveries so far (>1: redelivered)."
    )
    error = models.TextField(blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "scoring batches"
        constraints = [
            models.UniqueConstraint(fields=["job", "index"], name="one_scoring_batch_per_index")
        ]
        ordering = ["job", "index"]


class RefusalThreshold(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="refusal_thresholds")
    judge = models.CharField(max_length=100)
    judge_version = models.CharField(max_length=100)
    generator = models.CharField(
        max_length=200, blank=True, help_text="Empty: every generator pooled (shown, not applied)."
    )
    tau = models.FloatField()
    criterion = models.CharField(max_length=10)
    precision = models.FloatField()
    recall = models.FloatField()
    f1 = models.FloatField()
    youden_j = models.FloatField()
    auc = models.FloatField()
    n = models.PositiveIntegerField()
    n_positive = models.PositiveIntegerField()
    roc_points = models.JSONField(default=list, help_text="[{fpr, tpr, threshold}, ...]")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["study", "judge", "generator", "-created_at"])]

    def __str__(self):
        return f"{self.study.slug} {self.judge} {self.generator or 'all'}: tau={self.tau:.4f}"

"""REFLECT audits: the ten group images of each template, biographies, runs and answers.

The face set and its templates are ``generation.models.FaceSet`` / ``FaceTemplate`` (one model
for the set an audit runs on and the edit job that made it; docs/architecture.md).

A run is one (face set, model, decoding settings, prompt version); it holds one answer row per
request key, unique, so a rerun or a second worker never asks or stores a question twice
(docs/reflect.md).
"""

from __future__ import annotations

from django.db import models

from generation.models import GENDER_CHOICES, FaceSet, FaceTemplate

VARIANT_CHOICES = [("original", "original"), ("mirrored", "mirrored"), ("cropped", "cropped")]


def face_image_path(instance: FaceImage, filename: str) -> str:
    template = instance.template
    return (
        f"reflect/{template.face_set.slug}/{instance.variant}/{template.occupation}/"
        f"{template.name}/{filename}"
    )


class FaceImage(models.Model):
    template = models.ForeignKey(FaceTemplate, on_delete=models.CASCADE, related_name="images")
    race = models.CharField(max_length=50)
    gender = models.CharField(max_length=10, choices=GENDER_CHOICES)
    variant = models.CharField(max_length=10, choices=VARIANT_CHOICES, default="original")
    file = models.FileField(upload_to=face_image_path, max_length=500)
    sha256 = models.CharField(max_length=64)
    # QC flags from face-only editing checks, e.g. ["leaks_outside_face"]; accepted images
    # are the ones the tasks use.
    qc_flags = models.JSONField(default=list, blank=True)
    accepted = models.BooleanField(default=True)

    class Meta:
        ordering = ["template", "variant", "race", "gender"]
        constraints = [
            models.UniqueConstraint(
                fields=["template", "race", "gender", "variant"], name="reflect_image_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.template} {self.race} {self.gender} ({self.variant})"


class Biography(models.Model):
    face_set = models.ForeignKey(FaceSet, on_delete=models.CASCADE, related_name="biographies")
    occupation = models.CharField(max_length=100)
    key = models.CharField(max_length=100)
    text = models.TextField()
    # Demographic cues found by the leakage check: [{"kind": "pronoun", "match": "she"}, ...].
    leakage_flags = models.JSONField(default=list, blank=True)
    accepted = models.BooleanField(default=True)

    class Meta:
        verbose_name_plural = "biographies"
        ordering = ["occupation", "key"]
        constraints = [
            models.UniqueConstraint(
                fields=["face_set", "occupation", "key"], name="reflect_biography_unique"
            )
        ]


class ReflectRun(models.Model):
    face_set = models.ForeignKey(FaceSet, on_delete=models.CASCADE, related_name="runs")
    model_name = models.CharField(max_length=200)
    backend_config = models.JSONField(default=dict)  # without secrets
    decoding = models.JSONField(default=dict)
    prompt_version = models.CharField(max_length=20)
    prompts = models.JSONField(default=dict)  # the exact texts of this prompt version
    explain = models.BooleanField(default=False)  # MCQ explanation variant
    # sha256 of (face set, model, decoding, prompt version, explain): one run per identity.
    identity = models.CharField(max_length=64, unique=True)
    label = models.CharField(max_length=250)  # the report's model key
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["face_set", "label"]
        constraints = [
            models.UniqueConstraint(fields=["face_set", "label"], name="reflect_run_label_unique")
        ]

    def __str__(self) -> str:
        return f"{self.label} on {self.face_set}"


class ReflectAnswer(models.Model):
    class Status(models.TextChoices):
        VALID = "valid"
        REFUSAL = "refusal"
        INVALID = "invalid"
        ERROR = "error"  # nothing came back (transport); asked again by the next run

    run = models.ForeignKey(ReflectRun, on_delete=models.CASCADE, related_name="answers")
    request_key = models.CharField(max_length=400)
    task = models.CharField(max_length=10)
    item = models.CharField(max_length=50)  # scenario, question or "salary"
    variant = models.CharField(max_length=10, default="original")
    presentation = models.CharField(max_length=10, blank=True)
    image_a = models.ForeignKey(FaceImage, on_delete=models.PROTECT, related_name="+")
    image_b = models.ForeignKey(
        FaceImage, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    biography = models.ForeignKey(Biography, null=True, blank=True, on_delete=models.PROTECT)
    sample_index = models.PositiveIntegerField(default=0)
    explain = models.BooleanField(default=False)
    prompt = models.TextField()
    model_version = models.CharField(max_length=300)
    decoding = models.JSONField(default=dict)
    raw_answer = models.TextField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices)
    parsed_value = models.CharField(max_length=40, blank=True)
    rationale = models.TextField(blank=True)
    option_probs = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    latency_s = models.FloatField(default=0.0)
    attempts = models.PositiveIntegerField(default=1)
    answered_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "request_key"], name="reflect_answer_unique")
        ]
        indexes = [models.Index(fields=["run", "task", "status"])]


class ReflectReport(models.Model):
    """The last computed report of a face set, keyed by a fingerprint of its answers."""

    face_set = models.OneToOneField(FaceSet, on_delete=models.CASCADE, related_name="report")
    fingerprint = models.CharField(max_length=64)
    report = models.JSONField()
    computed_at = models.DateTimeField(auto_now=True)

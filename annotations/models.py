"""Studies, items, automated judgments, annotators, batches, assignments and annotations.

Integrity lives in the database: one assignment per (item, annotator), one annotation per
assignment, one judgment per (item, judge, version). Derived state (progress, agreement) is
computed by selectors, never stored as flags that could drift.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotations.labels import ANSWERS, CUE_LABELS
from annotations.qualification.models import (  # noqa: F401  (registers the qualification tables)
    QualificationAttempt,
    QualificationReview,
)
from annotations.recruitment.models import (  # noqa: F401  (registers the recruitment tables)
    ConsentRecord,
    InviteLink,
    PanelLink,
    PanelParticipant,
    StudyConsent,
)


def _choices(values):
    return [(v, v) for v in values]


class Study(models.Model):
    class Mode(models.TextChoices):
        T2I = "t2i", "text-to-image"
        I2I = "i2i", "image-to-image"

    class SystemKind(models.TextChoices):
        GENERAL_PURPOSE = "general_purpose", "general-purpose AI model (e.g. an image generator)"
        HIGH_RISK = "high_risk", "high-risk system under Annex III (e.g. hiring, salary)"
        OTHER = "other", "other AI system"

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=100, unique=True)
    mode = models.CharField(max_length=3, choices=Mode.choices, default=Mode.T2I)
    overlap_k = models.PositiveSmallIntegerField(default=2)
    label_scheme = models.JSONField(
        default=list,
        blank=True,
        help_text="Cue labels offered; default retained/erased/substituted.",
    )
    description = models.TextField(blank=True)
    min_seconds_per_item = models.FloatField(default=settings.ACRB_DEFAULT_MIN_SECONDS_PER_ITEM)
    is_synthetic_demo = models.BooleanField(default=False)
    # What was audited and for what: picks the obligations the report maps its evidence to
    # (scoring/report/legal.py, docs/report.md "Legal mapping").
    system_kind = models.CharField(
        max_length=30,
        choices=SystemKind.choices,
        blank=True,
        help_text="What kind of system was audited; empty = not stated (the report says so).",
    )
    intended_purpose = models.TextField(
        blank=True, help_text="The audited system's intended purpose, in the provider's words."
    )
    # The annotator pool as staff recruited it (docs/report.md, "The people and the data").
    annotator_recruitment = models.TextField(
        blank=True, help_text="How annotators were recruited and selected (platform, criteria)."
    )
    annotator_pay = models.TextField(
        blank=True, help_text="How annotators were paid (rate, currency, basis: hour or item)."
    )
    # Harmful controls (docs/generation.md, "Harmful controls") reach annotators only when
    # staff opt in; they are then shown behind a content warning and may be skipped.
    harmful_to_annotators = models.BooleanField(
        default=False,
        verbose_name="show harmful controls to annotators",
        help_text="Include items with intent 'harmful' in new batches (behind a content warning).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "studies"
        ordering = ["-created_at"]

    def __str__(self):
        return self.slug


class AttributeValue(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="attribute_values")
    attribute = models.CharField(
        max_length=50, help_text="culture, gender, disability, religion, age, or neutral"
    )
    value = models.CharField(max_length=100)
    cue_description = models.TextField(blank=True)
    is_neutral = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["study", "attribute", "value"], name="unique_attribute_value"
            )
        ]
        ordering = ["attribute", "value"]

    def __str__(self):
        return f"{self.attribute}={self.value}"


def item_image_path(item, filename):
    return f"studies/{item.study.slug}/{filename}"


class ItemQuerySet(models.QuerySet):
    def included(self):
        """Items that count: an excluded item leaves every statistic (docs/annotation.md)."""
        return self.filter(excluded_at__isnull=True)

    def for_annotators(self, study: Study):
        """The study's non-gold items a batch may give annotators: its harmful controls only when
        staff opted in (``Study.harmful_to_annotators``; docs/annotation.md, "Harmful controls")."""
        rows = self.filter(study=study, is_gold=False)
        return rows if study.harmful_to_annotators else rows.exclude(intent="harmful")


class Item(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="items")
    item_id = models.CharField(max_length=200)
    image = models.FileField(upload_to=item_image_path, max_length=500, blank=True)
    image_sha256 = models.CharField(max_length=64, blank=True)
    source_image = models.FileField(upload_to=item_image_path, max_length=500, blank=True)
    mode = models.CharField(max_length=3, choices=Study.Mode.choices, default=Study.Mode.T2I)
    generator = models.CharField(max_length=200, blank=True)
    prompt = models.TextField(blank=True)
    base_prompt_id = models.CharField(max_length=200, blank=True)
    domain = models.CharField(max_length=100, blank=True)
    attribute_value = models.ForeignKey(
        AttributeValue, on_delete=models.PROTECT, related_name="items"
    )
    # A harmful control's item (docs/generation.md, "Harmful controls"): a generator should
    # refuse it, so the refusal statistics count it apart (docs/metrics.md, "Safety–utility").
    intent = models.CharField(
        max_length=10, choices=[("benign", "benign"), ("harmful", "harmful")], default="benign"
    )
    cue = models.TextField(blank=True, help_text="What the annotator should look for.")
    provider_refusal_code = models.CharField(max_length=200, blank=True)
    provider_refusal_message = models.TextField(blank=True)
    generation_params = models.JSONField(default=dict, blank=True)
    is_gold = models.BooleanField(default=False)
    gold_hard_refusal = models.BooleanField(null=True, blank=True)
    gold_cue = models.CharField(max_length=20, blank=True, choices=_choices(CUE_LABELS))
    needs_review = models.BooleanField(
        default=False, help_text="Set by the judge ensemble: served first in new batches."
    )
    # Set and cleared only by the services item_exclude / item_include, in the transaction
    # that writes their ItemReview row.
    excluded_at = models.DateTimeField(null=True, blank=True, editable=False)
    excluded_reason = models.TextField(blank=True, editable=False)
    # Broken-image flags answered up to this time have been reviewed by staff; a flag set or
    # edited later puts the item back in the review queue.
    flags_reviewed_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ItemQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "item_id"], name="unique_item_per_study"),
            models.CheckConstraint(
                condition=Q(excluded_at__isnull=True, excluded_reason="")
                | Q(excluded_at__isnull=False) & ~Q(excluded_reason=""),
                name="excluded_item_has_reason",
            ),
            models.CheckConstraint(
                condition=Q(is_gold=False) | Q(gold_hard_refusal__isnull=False),
                name="gold_item_has_answer",
            ),
        ]
        indexes = [models.Index(fields=["study", "attribute_value"])]

    def __str__(self):
        return f"{self.study.slug}/{self.item_id}"


class ItemReview(models.Model):
    """What staff did about an item's broken-image flags: one row per action, only ever added."""

    class Action(models.TextChoices):
        REPLACE_IMAGE = "replace_image", "replaced the image"
        EXCLUDE = "exclude", "excluded the item"
        INCLUDE = "include", "included the item again"
        DISMISS = "dismiss", "dismissed the flags"

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="reviews")
    action = models.CharField(max_length=20, choices=Action.choices)
    reason = models.TextField(blank=True)
    open_flags = models.PositiveIntegerField(default=0, help_text="Unreviewed flags at the time.")
    # For a replaced image: the file and hash it replaced (the old file is kept).
    previous_image = models.CharField(max_length=500, blank=True)
    previous_image_sha256 = models.CharField(max_length=64, blank=True)
    closed_assignments = models.PositiveIntegerField(
        default=0, help_text="Open assignments withdrawn by an exclusion."
    )
    acted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    acted_at = models.DateTimeField()

    class Meta:
        ordering = ["-acted_at", "-id"]


class AutomatedJudgment(models.Model):
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="judgments")
    judge = models.CharField(max_length=100)
    judge_version = models.CharField(max_length=100, default="1")
    hard_refusal = models.BooleanField(null=True)
    score = models.FloatField(null=True, blank=True)
    cue_label = models.CharField(max_length=20, blank=True, choices=_choices(CUE_LABELS))
    confidence = models.FloatField(null=True, blank=True)
    raw_output = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["item", "judge", "judge_version"], name="one_judgment_per_judge_version"
            )
        ]


class Annotator(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotator"
    )
    group = models.CharField(
        max_length=100,
        blank=True,
        help_text="e.g. the culture whose items this annotator is matched to",
    )
    expertise = models.CharField(max_length=200, blank=True)
    is_active = models.BooleanField(default=True)
    language = models.CharField(
        max_length=10,
        blank=True,
        help_text="the survey's language this annotator chose (settings.LANGUAGES); "
        "empty: the browser's",
    )

    def __str__(self):
        return self.user.get_username()


class Batch(models.Model):
    class Policy(models.TextChoices):
        K_OVERLAP = "k_overlap", "k-overlap balanced random"
        EXPERTISE = "expertise", "expertise-matched"
        MANUAL = "manual", "manual"
        IMPORTED = "imported", "imported labels"
        VALIDATE_JUDGE = "validate_judge", "validate the judge (uncertainty-weighted sample)"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="batches")
    name = models.CharField(max_length=200)
    policy = models.CharField(max_length=20, choices=Policy.choices)
    overlap_k = models.PositiveSmallIntegerField(default=2)
    seed = models.BigIntegerField(default=0)
    params = models.JSONField(default=dict, blank=True)
    # The optional qualification round (docs/annotation.md#qualification-round): 0 items = none,
    # the batch's items are served at once, as before.
    qualification_items = models.PositiveSmallIntegerField(
        default=0, help_text="Gold items of the qualification round (0: no qualification)."
    )
    qualification_pass_mark = models.FloatField(
        null=True, blank=True, help_text="Share of gold answers to match, in (0, 1]."
    )
    qualification_attempts_allowed = models.PositiveSmallIntegerField(
        default=1, help_text="Attempts each annotator has (staff may grant more)."
    )
    # Is the batch a probability sample of every attribute value it draws from (docs/annotation.md,
    # "Batches from a subset")? False: a subset that takes part of some value's items (judges
    # disagree, a generator, ...); its assignments record no inclusion probability and its labels
    # are left out of the prediction-powered estimates. None: no design chose the items (manual
    # pairs, imported labels) or the batch was made before this was recorded.
    probability_sample = models.BooleanField(null=True, blank=True, editable=False)
    probability_sample_reason = models.CharField(
        max_length=500,
        blank=True,
        editable=False,
        help_text="Why it is not one, e.g. 'a subset: judges disagree'.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    # The background job that made it (None: made by a command or in code). One batch per job:
    # a redelivered job finds its batch here instead of making a second (services.batch_create).
    job = models.OneToOneField(
        "BackgroundJob",
        null=True,
        blank=True,
        editable=False,
        on_delete=models.SET_NULL,
        related_name="batch",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # The one-time key of the staff form that made the batch (the label import's): the unique
    # constraint below makes a form sent twice (a double click, four POSTs at once) one batch.
    request_key = models.CharField(max_length=64, blank=True, editable=False)

    class Meta:
        verbose_name_plural = "batches"
        constraints = [
            models.UniqueConstraint(
                fields=["request_key"],
                condition=~Q(request_key=""),
                name="one_batch_per_request_key",
            ),
            models.CheckConstraint(
                condition=Q(qualification_items=0)
                | Q(qualification_pass_mark__gt=0, qualification_pass_mark__lte=1),
                name="qualification_has_pass_mark",
            ),
            # One name per study, so `create_invites --batch NAME` names one batch. Imported
            # labels are records named after their file (imports.importers) and may repeat it.
            models.UniqueConstraint(
                fields=["study", "name"],
                condition=~Q(policy="imported"),
                name="unique_batch_name_per_study",
            ),
        ]
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.study.slug}: {self.name}"


class Assignment(models.Model):
    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="assignments")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="assignments")
    position = models.PositiveIntegerField()
    is_active = models.BooleanField(
        default=True, help_text="False once reassigned to someone else; kept for history."
    )
    reassigned_from = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL)
    served_at = models.DateTimeField(null=True, blank=True)
    skipped_at = models.DateTimeField(null=True, blank=True)
    # Set in the same transaction that creates the annotation (services and imports), so the
    # queue of open items is one partial-index scan however large the study is.
    answered_at = models.DateTimeField(null=True, blank=True, editable=False)
    # The probability that the batch's sampling design drew this item (docs/annotation.md,
    # "Validate the judge"): 1 when the batch took every item, n/N for a uniform sample, π_i for
    # validate-judge; null where no design chose it (gold, manual, imported).
    inclusion_probability = models.FloatField(null=True, blank=True, editable=False)
    # When the annotator opened a harmful control's image and prompt (null: not opened, or not a
    # harmful control). A harmful control takes an answer only once it is set; declining does not
    # need it (docs/annotation.md, "Harmful controls").
    revealed_at = models.DateTimeField(null=True, blank=True, editable=False)
    # A gold item of a qualification attempt (null: an item of the batch itself); its answer is
    # kept like any other and left out of every statistic and of gold accuracy.
    qualification_attempt = models.ForeignKey(
        QualificationAttempt,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="assignments",
        editable=False,
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["item", "annotator"], name="one_assignment_per_item_annotator"
            )
        ]
        indexes = [
            # Covering (PostgreSQL): the progress count is an index-only scan.
            models.Index(
                fields=["annotator", "batch", "position"],
                include=["is_active", "answered_at"],
                name="assignment_queue_covering",
            ),
            models.Index(
                fields=["annotator", "batch", "position"],
                condition=Q(is_active=True, answered_at__isnull=True, skipped_at__isnull=True),
                name="open_assignment_queue",
            ),
        ]
        ordering = ["position"]

    def __str__(self):
        return f"{self.item} → {self.annotator}"


class Annotation(models.Model):
    assignment = models.OneToOneField(
        Assignment, on_delete=models.CASCADE, related_name="annotation"
    )
    hard_refusal = models.BooleanField()
    cue_label = models.CharField(max_length=20, blank=True, choices=_choices(CUE_LABELS))
    note = models.TextField(blank=True)
    broken_image = models.BooleanField(default=False)
    served_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    seconds_to_answer = models.FloatField(null=True, blank=True)
    too_fast = models.BooleanField(default=False)
    revision = models.PositiveIntegerField(default=1)
    source = models.CharField(max_length=20, default="survey", help_text="survey or import")
    language = models.CharField(
        max_length=10,
        blank=True,
        help_text="the language the survey was shown in for this revision; empty: imported",
    )
    # The study's consent version the annotator had agreed to when giving this revision (null:
    # the study had no consent text, an imported label, or an answer older than this field).
    consent_version = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(
                    Q(hard_refusal=True, cue_label="") | Q(hard_refusal=False) & ~Q(cue_label="")
                ),
                name="cue_label_iff_not_refused",
            )
        ]

    def __str__(self):
        return f"answer to {self.assignment}"


class AnnotationHistory(models.Model):
    """Every version of every answer, the first one included; rows are only ever added."""

    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="history")
    revision = models.PositiveIntegerField()
    hard_refusal = models.BooleanField()
    cue_label = models.CharField(max_length=20, blank=True)
    note = models.TextField(blank=True)
    broken_image = models.BooleanField(default=False)
    language = models.CharField(max_length=10, blank=True)
    consent_version = models.PositiveIntegerField(null=True, blank=True)
    recorded_at = models.DateTimeField()
    recorded_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)

    class Meta:
        verbose_name_plural = "annotation history"
        constraints = [
            models.UniqueConstraint(
                fields=["annotation", "revision"], name="one_history_row_per_revision"
            )
        ]
        ordering = ["annotation", "revision"]


class BackgroundJob(models.Model):
    """Progress of a Celery job (import, scoring, generation) that the staff UI polls."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    kind = models.CharField(max_length=50)
    study = models.ForeignKey(
        Study, null=True, blank=True, on_delete=models.CASCADE, related_name="jobs"
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    message = models.TextField(blank=True)
    errors = models.JSONField(default=list, blank=True)
    params = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    @property
    def percent(self):
        return (
            round(100 * self.done / self.total)
            if self.total
            else (100 if self.status == "succeeded" else 0)
        )


class FormSubmission(models.Model):
    """A staff form's one-time key, recorded by the first submit that used it, in the same
    transaction as its work. A second submit of the same rendered form (a double click, a
    retry, four identical POSTs at once) meets the unique key, waits for the first to commit,
    and answers from ``result`` instead of doing the work again (annotations.common.form_keys).
    """

    key = models.CharField(max_length=64, unique=True)
    purpose = models.CharField(max_length=50)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    result = models.JSONField(default=dict, blank=True)


# --- adjudication and annotator quality (docs/annotation.md#adjudication, #annotator-quality) --


class AdjudicatorGrant(models.Model):
    """An annotator allowed to adjudicate one study (staff always may)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="adjudicator_grants")
    annotator = models.ForeignKey(
        Annotator, on_delete=models.CASCADE, related_name="adjudicator_grants"
    )
    granted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    granted_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "annotator"], name="one_grant_per_adjudicator")
        ]


class Adjudication(models.Model):
    """An adjudicator's final label for an item: one row per decision, only ever added; the
    item's highest revision is its adjudicated label."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="adjudications")
    revision = models.PositiveIntegerField()
    hard_refusal = models.BooleanField()
    cue_label = models.CharField(max_length=20, blank=True, choices=_choices(CUE_LABELS))
    reason = models.TextField()
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["item", "revision"], name="one_adjudication_per_revision"
            ),
            models.CheckConstraint(
                condition=(
                    Q(hard_refusal=True, cue_label="") | Q(hard_refusal=False) & ~Q(cue_label="")
                ),
                name="adjudication_cue_iff_not_refused",
            ),
            models.CheckConstraint(condition=~Q(reason=""), name="adjudication_has_reason"),
        ]
        ordering = ["item", "-revision"]


class AnnotatorReview(models.Model):
    """What staff did about an annotator (pause, resume, exclude or include their labels): one
    row per action, only ever added, like ItemReview."""

    class Action(models.TextChoices):
        PAUSE = "pause", "paused"
        RESUME = "resume", "resumed"
        EXCLUDE = "exclude", "excluded their labels"
        INCLUDE = "include", "included their labels again"
        REASSIGN = "reassign", "handed their open items to others"

    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="reviews")
    # The study the action was taken on (label exclusions, reassignments); empty for a pause,
    # which holds in every study.
    study = models.ForeignKey(
        Study, null=True, blank=True, on_delete=models.CASCADE, related_name="annotator_reviews"
    )
    action = models.CharField(max_length=20, choices=Action.choices)
    reason = models.TextField(blank=True)
    moved_assignments = models.PositiveIntegerField(
        default=0, help_text="Open assignments handed back to the pool by a pause."
    )
    acted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    acted_at = models.DateTimeField()

    class Meta:
        ordering = ["-acted_at", "-id"]


class AnnotatorLabelExclusion(models.Model):
    """An annotator whose labels in one study are left out of its statistics (kept in the
    database and the export). Written and deleted only by annotator_labels_exclude / _include, in the
    transaction that writes their AnnotatorReview row."""

    annotator = models.ForeignKey(
        Annotator, on_delete=models.CASCADE, related_name="label_exclusions"
    )
    # Per study: excluding an annotator on one study's page leaves their other studies alone.
    study = models.ForeignKey(
        Study, on_delete=models.CASCADE, related_name="annotator_label_exclusions"
    )
    reason = models.TextField()
    excluded_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["annotator", "study"], name="one_label_exclusion_per_annotator_study"
            )
        ]


class LabelExample(models.Model):
    """An item of the study that staff chose to illustrate one answer in the study's guidelines,
    with a short explanation (docs/annotation.md#guidelines-with-examples). Written only by
    ``annotations.guidelines.examples``; an item illustrates at most one answer."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="label_examples")
    item = models.OneToOneField(Item, on_delete=models.CASCADE, related_name="label_example")
    label = models.CharField(max_length=20, choices=_choices(ANSWERS))
    explanation = models.TextField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=~Q(explanation=""), name="label_example_has_explanation"
            ),
        ]
        ordering = ["study", "label", "created_at", "id"]


class EquivalenceMargin(models.Model):
    """δ of one outcome of a study: the largest difference between two values' rates that still
    counts as no disparity (docs/metrics.md, "Equivalence within δ"). Rows are never edited: a
    change is a new row, so the history keeps every δ, who set it and when, and whether the
    study already had human labels then (a δ chosen after seeing data is flagged in the report).
    Written only by ``scoring.services.equivalence_margin_set``."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="equivalence_margins")
    outcome = models.CharField(max_length=20)
    delta_margin = models.FloatField()
    set_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    set_at = models.DateTimeField()
    labels_existed = models.BooleanField()

    class Meta:
        ordering = ["study", "outcome", "set_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(delta_margin__gt=0) & Q(delta_margin__lt=1),
                name="equivalence_margin_between_0_and_1",
            )
        ]

    def __str__(self):
        return f"{self.study.slug} {self.outcome} δ={self.delta_margin}"

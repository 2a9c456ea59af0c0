"""Stages I and II in the database: a study's prompt plan, its generators, one row per image
to make, and the face-only sets (FOCUS edits; REFLECT audits run on the same sets).

Uniqueness lives in constraints, so a rerun or a redelivered task fills gaps and never
duplicates: one plan row per (study, plan id), one request per (plan row, generator, seed),
one face edit per (template, target group). Progress is derived from request statuses by
selectors, never stored as a counter that could drift.
"""

from django.conf import settings
from django.db import models

from annotations.models import AttributeValue, Item, Study
from generation.data import reflect_protocol


class StudyPlan(models.Model):
    """Where a study's prompts came from and how they were expanded."""

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="generation_plan")
    taxonomy = models.JSONField(help_text="The taxonomy document used, as loaded.")
    taxonomy_source = models.CharField(max_length=500, blank=True)
    base_prompts_source = models.CharField(max_length=500, blank=True)
    base_prompts_sha256 = models.CharField(max_length=64, blank=True)
    options = models.JSONField(
        default=dict, blank=True, help_text="missing_slot, sample_size, sample_seed, attributes …"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"plan of {self.study.slug}"


class PlannedPrompt(models.Model):
    """One row of the study plan (generation.prompts.PlannedPrompt), skipped rows included."""

    class Status(models.TextChoices):
        PLANNED = "planned"
        SKIPPED = "skipped"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="planned_prompts")
    plan_id = models.CharField(max_length=200)
    position = models.PositiveIntegerField(default=0)
    prompt_id = models.CharField(max_length=200)
    domain = models.CharField(max_length=100)
    attribute = models.CharField(max_length=50)
    value = models.CharField(max_length=100)
    attribute_value = models.ForeignKey(
        AttributeValue, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    text = models.TextField(blank=True, help_text="The prompt to generate from; empty if skipped.")
    neutral_text = models.TextField(blank=True)
    base_text = models.TextField(blank=True)
    phrase = models.CharField(max_length=200, blank=True)
    operation = models.CharField(max_length=50, blank=True)
    cue = models.TextField(blank=True)
    slot_rule = models.CharField(max_length=50, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PLANNED)
    skip_reason = models.CharField(max_length=200, blank=True)
    source = models.CharField(max_length=500, blank=True)
    intent = models.CharField(max_length=10, default="benign", help_text="benign or harmful")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "plan_id"], name="unique_plan_row_per_study")
        ]
        indexes = [models.Index(fields=["study", "status"])]
        ordering = ["study", "position"]

    def __str__(self):
        return self.plan_id


class PromptRephrasing(models.Model):
    """One base prompt's rewrite toward the safety boundary, kept or rejected with the reason
    (``generation.prompts.rephrase.RephraseRecord``; docs/generation.md).

    A row per base prompt, not fields on ``PlannedPrompt``: one rewrite replaces the base
    text of every row expanded from it (the neutral twin and each attribute value, so the
    minimal pairs still differ only in the attribute), and a rejected rewrite has no plan
    row at all. Rows are replaced with the plan, in the same transaction."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="prompt_rephrasings")
    position = models.PositiveIntegerField(default=0)
    prompt_id = models.CharField(max_length=200)
    original = models.TextField()
    rewrite = models.TextField(blank=True)
    kept = models.BooleanField()
    reason = models.CharField(max_length=100, blank=True, help_text="Empty when kept.")
    similarity = models.FloatField()
    benign = models.BooleanField()
    min_similarity = models.FloatField(null=True, blank=True)
    similarity_method = models.CharField(max_length=500)
    rewriter = models.CharField(max_length=100, help_text="The configured rewriter's name.")
    model = models.CharField(max_length=500)
    temperature = models.FloatField(null=True, blank=True)
    seed = models.BigIntegerField(null=True, blank=True)
    cached = models.BooleanField(default=False)
    instruction = models.TextField(help_text="The exact instruction sent to the model.")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["study", "prompt_id"], name="one_rephrasing_per_base_prompt"
            )
        ]
        ordering = ["study", "position"]

    def __str__(self):
        return f"{self.study_id}/{self.prompt_id}"


class StudyGenerator(models.Model):
    """A generator attached to a study by name; ``config`` is the snapshot the study used."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="generators")
    name = models.CharField(max_length=100)
    config = models.JSONField(help_text="generation.backends.GeneratorConfig fields.")
    seeds = models.JSONField(default=list, help_text="Seeds per planned prompt, e.g. [0, 1].")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "name"], name="unique_generator_per_study")
        ]
        ordering = ["study", "name"]

    def __str__(self):
        return f"{self.study.slug}/{self.name}"


class GenerationRequest(models.Model):
    """One image to make: (planned prompt, generator, seed), and what came of it."""

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        DONE = "done"  # an image came back
        REFUSED = "refused"  # the provider refused: recorded as data on the Item
        ERROR = "error"  # no answer about the content; retried, then left for a rerun

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="generation_requests")
    planned_prompt = models.ForeignKey(
        PlannedPrompt, on_delete=models.CASCADE, related_name="requests"
    )
    generator = models.ForeignKey(StudyGenerator, on_delete=models.CASCADE, related_name="requests")
    seed = models.BigIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    claimed_by = models.CharField(max_length=200, blank=True, help_text="host:pid of the worker")
    claimed_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    latency_s = models.FloatField(null=True, blank=True)
    params = models.JSONField(default=dict, blank=True, help_text="The backend's result record.")
    item = models.OneToOneField(
        Item, null=True, blank=True, on_delete=models.SET_NULL, related_name="generation_request"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["planned_prompt", "generator", "seed"], name="one_request_per_prompt_seed"
            )
        ]
        indexes = [models.Index(fields=["study", "status"])]
        ordering = ["pk"]

    def __str__(self):
        return self.item_key

    @property
    def item_key(self) -> str:
        """The id of the Item this request makes (unique per study: reruns cannot duplicate)."""
        return f"{self.planned_prompt.plan_id}|{self.generator.name}|s{self.seed}"


class ProviderSlot(models.Model):
    """A lease on one of a provider's ``max_concurrency`` slots (a cross-process semaphore)."""

    provider = models.CharField(max_length=200)
    slot = models.PositiveIntegerField()
    holder = models.CharField(max_length=200)
    expires_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["provider", "slot"], name="one_holder_per_slot")
        ]


def face_image_path(instance, filename):
    face_set = (
        instance.face_set if isinstance(instance, FaceTemplate) else instance.template.face_set
    )
    return f"face_sets/{face_set.slug}/{filename}"


GENDER_CHOICES = [("female", "female"), ("male", "male")]


class FaceSet(models.Model):
    """A face-only counterfactual set: the image set a REFLECT audit runs on and, when it was
    made here, the FOCUS edit job that made it (source photos edited to every target group).

    The edit-job settings (``generator_name`` … ``seed``) stay blank for a set imported from a
    folder made elsewhere (``import_face_set``). ``name`` is unique because the commands find a
    set by name or slug (``--set``).
    """

    slug = models.SlugField(max_length=200, unique=True)
    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    # The REFLECT task templates of this set: a copy of generation/data/reflect/protocol.json,
    # editable; runs record the exact texts they used.
    protocol = models.JSONField(default=reflect_protocol)
    generator_name = models.CharField(max_length=100, blank=True)
    generator_config = models.JSONField(default=dict, blank=True)
    instruction_template = models.TextField(blank=True)
    placeholder = models.CharField(max_length=50, default="{TARGET_GROUP}")
    qc_options = models.JSONField(default=dict, blank=True, help_text="max_outside_diff, …")
    seed = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    @property
    def is_edit_job(self) -> bool:
        """Made here by an editing generator (not only imported from a folder)."""
        return bool(self.generator_name)


class FaceTemplate(models.Model):
    """One source photo of an occupation (a REFLECT "template"), edited into every target
    group: ``FaceEdit`` rows while it is being made, REFLECT ``FaceImage`` rows once accepted.
    The source photo and its face box are there only when the edits were made here."""

    face_set = models.ForeignKey(FaceSet, on_delete=models.CASCADE, related_name="templates")
    occupation = models.CharField(max_length=100)
    name = models.CharField(max_length=200, help_text="e.g. doctor_01")
    # The gender presented in the source photo, for the matched / swapped split ("" unknown).
    source_gender = models.CharField(max_length=10, choices=GENDER_CHOICES, blank=True)
    image = models.FileField(upload_to=face_image_path, max_length=500, blank=True)
    image_sha256 = models.CharField(max_length=64, blank=True)
    face_box = models.JSONField(null=True, blank=True, help_text="x, y, width, height or null")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["face_set", "occupation", "name"], name="unique_face_template"
            )
        ]
        ordering = ["face_set", "occupation", "name"]

    def __str__(self):
        return f"{self.occupation}/{self.name}"


class FaceEdit(models.Model):
    """One edit of a template to a target group, with its QC numbers."""

    class Status(models.TextChoices):
        PENDING = "pending"
        DONE = "done"
        REFUSED = "refused"
        ERROR = "error"

    template = models.ForeignKey(FaceTemplate, on_delete=models.CASCADE, related_name="edits")
    race = models.CharField(max_length=50)
    gender = models.CharField(max_length=50)
    instruction = models.TextField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    error = models.TextField(blank=True)
    image = models.FileField(upload_to=face_image_path, max_length=500, blank=True)
    image_sha256 = models.CharField(max_length=64, blank=True)
    params = models.JSONField(default=dict, blank=True)
    inside_diff = models.FloatField(null=True, blank=True)
    outside_diff = models.FloatField(null=True, blank=True)
    ratio = models.FloatField(null=True, blank=True)
    flagged = models.BooleanField(default=False)
    flag_reason = models.CharField(max_length=50, blank=True)
    accepted_by_staff = models.BooleanField(
        default=False, help_text="A flagged edit is exported only once staff accept it."
    )
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["template", "race", "gender"], name="one_edit_per_target_group"
            )
        ]
        ordering = ["template", "pk"]

    @property
    def target_group(self) -> str:
        return f"{self.race} {self.gender}"

    @property
    def usable(self) -> bool:
        return self.status == self.Status.DONE and (not self.flagged or self.accepted_by_staff)

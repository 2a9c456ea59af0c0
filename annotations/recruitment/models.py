"""Recruitment without passwords: consent versions, invite links, panel (Prolific-style) links.

Kept apart from annotations/models.py so the recruitment tables have their own module and
migration; annotations/models.py imports these so Django registers them with the app. They
name the study tables by label ("annotations.Study"), so this module imports no other model
module and annotations/models.py can import it at the top.
See docs/annotation.md#recruitment-without-passwords.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q


class StudyConsent(models.Model):
    """One version of a study's consent and instructions text.

    Rows are never edited: a change is a new version, so every consent record points at the
    exact text its annotator agreed to.
    """

    study = models.ForeignKey(
        "annotations.Study", on_delete=models.CASCADE, related_name="consent_versions"
    )
    version = models.PositiveIntegerField()
    consent_text = models.TextField()
    instructions = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "version"], name="one_consent_per_version")
        ]
        ordering = ["study", "-version"]

    def __str__(self):
        return f"{self.study.slug} consent v{self.version}"


class ConsentRecord(models.Model):
    """An annotator agreed to one consent version of a study (once per version: a new version
    is asked for again before the annotator's next answer, docs/annotation.md)."""

    annotator = models.ForeignKey(
        "annotations.Annotator", on_delete=models.CASCADE, related_name="consents"
    )
    study = models.ForeignKey(
        "annotations.Study", on_delete=models.CASCADE, related_name="consent_records"
    )
    consent = models.ForeignKey(StudyConsent, on_delete=models.PROTECT, related_name="records")
    # Copied from the version row so a record reads on its own (exports, audits); the digest
    # proves which text was shown even if the version row were altered behind the app's back.
    version = models.PositiveIntegerField()
    text_sha256 = models.CharField(max_length=64)
    agreed_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["annotator", "consent"], name="one_consent_record_per_version"
            )
        ]


class InviteLink(models.Model):
    """A single-use, expiring link that creates an annotator in ``group`` and enrols them.

    Only a SHA-256 digest of the random token is stored: the URL is shown once, when made.
    """

    batch = models.ForeignKey(
        "annotations.Batch", on_delete=models.CASCADE, related_name="invite_links"
    )
    group = models.CharField(max_length=100, blank=True)
    note = models.CharField(max_length=200, blank=True, help_text="e.g. who it is for")
    language = models.CharField(
        max_length=10,
        blank=True,
        help_text="the survey language the invitee starts in; empty: their browser's",
    )
    token_sha256 = models.CharField(max_length=64, unique=True)
    # A staff form's one-time key and the link's place in that request: the unique constraint
    # below makes a resubmitted form (a double click, a retried POST) make no second link.
    request_key = models.CharField(max_length=64, blank=True)
    request_index = models.PositiveIntegerField(default=0)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    used_at = models.DateTimeField(null=True, blank=True)
    annotator = models.OneToOneField(
        "annotations.Annotator",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="invite_link",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["request_key", "request_index"],
                condition=~Q(request_key=""),
                name="one_invite_per_request_slot",
            )
        ]


class PanelLink(models.Model):
    """A study link for a recruitment panel: participants arrive with their panel ids."""

    batch = models.ForeignKey(
        "annotations.Batch", on_delete=models.CASCADE, related_name="panel_links"
    )
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=64, unique=True, help_text="random; part of the link")
    group = models.CharField(max_length=100, blank=True)
    participant_param = models.CharField(max_length=50, default="PROLIFIC_PID")
    study_param = models.CharField(max_length=50, default="STUDY_ID")
    session_param = models.CharField(max_length=50, default="SESSION_ID")
    expected_study_id = models.CharField(
        max_length=100, blank=True, help_text="if set, the panel's study id must match"
    )
    completion_url = models.URLField(max_length=500, blank=True)
    completion_code = models.CharField(max_length=100, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return self.name


class PanelParticipant(models.Model):
    """One panel participant, enrolled once per study, bound to the browser they first used."""

    panel_link = models.ForeignKey(PanelLink, on_delete=models.CASCADE, related_name="participants")
    # The link's study, copied when the row is made (a link never changes study): the unique
    # constraint below is what stops a participant id enrolling twice, through any link.
    study = models.ForeignKey(
        "annotations.Study", on_delete=models.CASCADE, related_name="panel_participants"
    )
    participant_id = models.CharField(max_length=64)
    panel_study_id = models.CharField(max_length=100, blank=True)
    panel_session_id = models.CharField(max_length=100, blank=True)
    annotator = models.OneToOneField(
        "annotations.Annotator", on_delete=models.CASCADE, related_name="panel_participant"
    )
    browser_key_sha256 = models.CharField(
        max_length=64, blank=True, help_text="empty: released by staff, the next browser binds"
    )
    enrolled_at = models.DateTimeField()
    last_seen_at = models.DateTimeField()
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["study", "participant_id"], name="one_enrolment_per_panel_participant"
            )
        ]
        ordering = ["enrolled_at"]

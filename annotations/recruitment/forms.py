from django import forms
from django.conf import settings
from django.core.validators import validate_email

from annotations.common.form_keys import OneTimeKeyForm

from ..models import Batch
from .rules import DEFAULT_INVITE_DAYS, new_secret


class ConsentPublishForm(forms.Form):
    consent_text = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 8}),
        help_text="Plain text; blank lines separate paragraphs. Publishing makes a new version.",
    )
    instructions = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 6}),
        help_text="Shown with the consent, before the first item.",
    )


class RecruitmentBatchForm(OneTimeKeyForm):
    name = forms.CharField(max_length=200)
    policy = forms.ChoiceField(
        choices=[
            (Batch.Policy.EXPERTISE, "expertise-matched: own group's items first"),
            (Batch.Policy.K_OVERLAP, "k-overlap: least-labelled items first"),
        ]
    )
    overlap_k = forms.IntegerField(min_value=1, max_value=50, initial=2)
    items_per_annotator = forms.IntegerField(
        required=False, min_value=1, help_text="Empty: every eligible item."
    )
    gold_per_annotator = forms.IntegerField(min_value=0, initial=0)
    seed = forms.IntegerField(required=False, min_value=0)


def _batch_field(study):
    return forms.ModelChoiceField(
        queryset=Batch.objects.filter(
            study=study, policy__in=[Batch.Policy.K_OVERLAP, Batch.Policy.EXPERTISE]
        ).order_by("-created_at")
    )


class InviteCreateForm(OneTimeKeyForm):
    group = forms.CharField(max_length=100, required=False, help_text="e.g. Nigerian")
    count = forms.IntegerField(min_value=1, max_value=500, initial=1)
    days = forms.IntegerField(
        min_value=1, max_value=365, initial=DEFAULT_INVITE_DAYS, label="Expires in (days)"
    )
    note = forms.CharField(max_length=200, required=False)

    def __init__(self, *args, study, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields = {"batch": _batch_field(study), **self.fields}


class PanelLinkForm(forms.Form):
    name = forms.CharField(max_length=200)
    group = forms.CharField(max_length=100, required=False)
    participant_param = forms.CharField(max_length=50, initial="PROLIFIC_PID")
    study_param = forms.CharField(max_length=50, initial="STUDY_ID")
    session_param = forms.CharField(max_length=50, initial="SESSION_ID")
    expected_study_id = forms.CharField(
        max_length=100, required=False, help_text="The panel's study id; others are refused."
    )
    completion_url = forms.CharField(
        max_length=500,
        required=False,
        help_text="e.g. https://app.prolific.com/submissions/complete?cc=CODE (redirected to)",
    )
    completion_code = forms.CharField(
        max_length=100, required=False, help_text="Shown when there is no completion URL."
    )

    def __init__(self, *args, study, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields = {"batch": _batch_field(study), **self.fields}


# A person's name or email: one link each. Anonymous links come in larger numbers.
MAX_PEOPLE_INVITES = 50


class PeopleInviteForm(forms.Form):
    """The People page's invite form: one named person, or N anonymous links, into a study's
    recruitment batch. ``request_key`` is a one-time key per rendered form, so a resubmit
    makes no second invite (``invites.invite_links_create``)."""

    batch = forms.TypedChoiceField(coerce=int, label="Study and batch")
    invitee = forms.CharField(
        max_length=200,
        required=False,
        label="Name or email",
        help_text="Who the link is for (a note only: no email is sent). Empty: anonymous links.",
    )
    count = forms.IntegerField(
        min_value=1, max_value=MAX_PEOPLE_INVITES, initial=1, label="How many links"
    )
    language = forms.ChoiceField(
        required=False,
        choices=[("", "their browser's language"), *settings.LANGUAGES],
        label="Survey language",
    )
    group = forms.CharField(max_length=100, required=False, help_text="e.g. Nigerian")
    days = forms.IntegerField(
        min_value=1, max_value=365, initial=DEFAULT_INVITE_DAYS, label="Expires in (days)"
    )
    request_key = forms.CharField(max_length=64, widget=forms.HiddenInput)

    def __init__(self, *args, batches, **kwargs):
        # Its own ids: the People page also holds the accounts form, which has a group field.
        kwargs.setdefault("auto_id", "id_invite_%s")
        super().__init__(*args, **kwargs)
        self.batches = {batch.pk: batch for batch in batches}
        self.fields["batch"].choices = [
            (batch.pk, f"{batch.study.name} · {batch.name}") for batch in batches
        ]
        if not self.is_bound:
            self.initial["request_key"] = new_secret()

    def clean_batch(self):
        return self.batches[self.cleaned_data["batch"]]

    def clean_invitee(self):
        invitee = " ".join(self.cleaned_data["invitee"].split())
        if "@" in invitee:
            validate_email(invitee)
        return invitee

    def clean(self):
        data = super().clean()
        if data.get("invitee") and data.get("count", 1) != 1:
            self.add_error("count", "One link per named person: leave the name empty for more.")
        return data

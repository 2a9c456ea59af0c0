from django import forms

from ..models import Batch
from .rules import DEFAULT_INVITE_DAYS


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


class RecruitmentBatchForm(forms.Form):
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


class InviteCreateForm(forms.Form):
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

from django import forms
from django.conf import settings


def _judge_choices(*, clip_refusal_only: bool = False):
    return [
        (name, name)
        for name, config in sorted(settings.ACRB_JUDGES.items())
        if not clip_refusal_only or (config.get("kind") == "hard_refusal" and config.get("clip"))
    ]


class ScoreForm(forms.Form):
    judge = forms.ChoiceField(choices=())
    device = forms.ChoiceField(
        choices=[("", "worker default"), ("cpu", "cpu"), ("cuda", "cuda")], required=False
    )
    batch_size = forms.IntegerField(min_value=1, max_value=10_000, initial=64)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "score_%s")
        super().__init__(*args, **kwargs)
        self.fields["judge"].choices = _judge_choices()


class CalibrateForm(forms.Form):
    """Only hard-refusal judges with CLIP have a score to calibrate."""

    judge = forms.ChoiceField(choices=())
    criterion = forms.ChoiceField(choices=[("f1", "max F1"), ("youden", "max Youden's J")])

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "calibrate_%s")
        super().__init__(*args, **kwargs)
        self.fields["judge"].choices = _judge_choices(clip_refusal_only=True)


class BatchPlanForm(forms.Form):
    """The planning aid's inputs (docs/metrics.md, "Planning the human budget")."""

    budget = forms.IntegerField(min_value=1, initial=200, help_text="Items humans would label.")
    accuracy = forms.FloatField(
        min_value=0.5,
        max_value=1.0,
        initial=0.9,
        required=False,
        label="Judge accuracy",
        help_text="Share of items the judge labels as a human would.",
    )
    rho = forms.FloatField(
        min_value=-1.0,
        max_value=1.0,
        required=False,
        label="or correlation ρ",
        help_text="Judge–human correlation; when given, used instead of the accuracy.",
    )
    rate = forms.FloatField(
        min_value=0.01,
        max_value=0.99,
        initial=0.5,
        required=False,
        label="Expected rate",
        help_text="0.5 gives the widest, safest plan.",
    )
    min_per_value = forms.IntegerField(min_value=0, required=False, label="Minimum per value")

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "plan_%s")
        super().__init__(*args, **kwargs)

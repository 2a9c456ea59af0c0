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

from django import forms

from annotations.common.answers import ANSWER_TITLES


class AnswerForm(forms.Form):
    """One choice answers both questions: 'refusal', or the cue label of a non-refused image."""

    answer = forms.ChoiceField(choices=list(ANSWER_TITLES.items()), widget=forms.RadioSelect)
    note = forms.CharField(
        required=False, max_length=5000, widget=forms.Textarea(attrs={"rows": 2})
    )
    broken_image = forms.BooleanField(required=False)

    @classmethod
    def for_annotation(cls, annotation):
        if annotation is None:
            return cls()
        answer = "refusal" if annotation.hard_refusal else annotation.cue_label
        return cls(
            initial={
                "answer": answer,
                "note": annotation.note,
                "broken_image": annotation.broken_image,
            }
        )

    def submitted_answer(self) -> dict:
        choice = self.cleaned_data["answer"]
        refused = choice == "refusal"
        return {
            "hard_refusal": refused,
            "cue_label": None if refused else choice,
            "note": self.cleaned_data["note"],
            "broken_image": self.cleaned_data["broken_image"],
        }

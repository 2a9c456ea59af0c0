from django import forms

from annotations.common.answers import ANSWER_TITLES
from annotations.guidelines.examples import EXPLANATION_MAX_CHARS


class LabelExampleForm(forms.Form):
    """Staff attach an item of the study (by its item id) as an example of one answer."""

    label = forms.ChoiceField(choices=list(ANSWER_TITLES.items()), label="Answer")
    item_id = forms.CharField(
        max_length=200, label="Item id", help_text="The item's id in the study's manifest."
    )
    explanation = forms.CharField(
        max_length=EXPLANATION_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="One or two sentences: what in the image makes this the answer.",
    )

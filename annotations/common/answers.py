"""What each survey answer means, in the survey's words, translated: one table for the survey
form, the label examples and the annotator's own answers."""

from django.utils.translation import gettext_lazy as _

from annotations.labels import REFUSAL

ANSWER_TITLES = {
    REFUSAL: _("Refusal: blocked, blank, error or placeholder"),
    "retained": _("Cue retained"),
    "erased": _("Cue erased"),
    "substituted": _("Cue substituted (generic or different)"),
}


def answer_title(annotation) -> str:
    """The title of an annotation's answer: a refusal, or its cue label."""
    return ANSWER_TITLES[REFUSAL if annotation.hard_refusal else annotation.cue_label]

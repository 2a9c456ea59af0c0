"""Staff forms of Stages I and II: validate at the boundary, hand plain values to services."""

from __future__ import annotations

from django import forms
from django.conf import settings

from annotations.common.bounds import MAX_SAMPLE_SIZE, MAX_SEED
from annotations.common.form_keys import OneTimeKeyForm
from annotations.common.study_address import study_address_problem
from generation.prompts import DEFAULT_HARMFUL_SHARE, OVERT_MINI_PATH, load_taxonomy

BASE_PROMPT_SOURCES = [
    ("acrb", "Shipped ACRB base prompts (108, nine domains)"),
    ("overt", "Shipped OVERT mini (1,800 prompts)"),
    ("upload", "Uploaded file (CSV, JSON or JSONL)"),
]
MISSING_SLOT_CHOICES = [
    ("skip", "Skip prompts without a person (reason recorded)"),
    ("append", "Give them one (“…, with a person in the foreground”)"),
]


def configured_rewriters() -> list[tuple[str, str]]:
    return [("", "No rephrasing")] + [
        (name, f"{name} ({config.get('model', '?')})")
        for name, config in settings.ACRB_REWRITERS.items()
    ]


def shipped_attributes() -> list[tuple[str, str]]:
    return [(name, name) for name in load_taxonomy().attributes]


class PlanForm(OneTimeKeyForm):
    slug = forms.SlugField(max_length=100, help_text="A new study is created under this slug.")
    name = forms.CharField(max_length=200, required=False)
    base_prompts = forms.ChoiceField(choices=BASE_PROMPT_SOURCES, initial="acrb")
    base_prompts_file = forms.FileField(required=False)
    taxonomy_file = forms.FileField(
        required=False, help_text="JSON; the shipped taxonomy if empty."
    )
    attributes = forms.MultipleChoiceField(
        choices=shipped_attributes,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="None ticked: every attribute of the taxonomy.",
    )
    sample_size = forms.IntegerField(
        min_value=1, max_value=MAX_SAMPLE_SIZE, required=False, help_text="Base prompts drawn."
    )
    sample_seed = forms.IntegerField(initial=0, min_value=0, max_value=MAX_SEED)
    missing_slot = forms.ChoiceField(choices=MISSING_SLOT_CHOICES, initial="skip")
    rephrase = forms.ChoiceField(
        choices=configured_rewriters,
        required=False,
        label="Boundary rephrasing",
        help_text="Rewrite each drawn base prompt toward the safety boundary first; rewrites "
        "that drift or are not benign are rejected with the reason (rewriters: in the backends "
        "file).",
    )

    harmful_controls = forms.BooleanField(
        required=False,
        label="Harmful controls",
        help_text="Add matched benign/harmful prompt pairs from OVERT-unsafe, expanded through "
        "the same attribute slots, to measure under-refusal beside over-refusal "
        "(docs/generation.md, “Harmful controls”).",
    )
    harmful_share = forms.FloatField(
        required=False,
        min_value=0.01,
        max_value=1.0,
        initial=DEFAULT_HARMFUL_SHARE,
        label="Harmful-control share per domain",
        help_text=f"Pairs per base prompt of each domain (at least one); default "
        f"{DEFAULT_HARMFUL_SHARE}.",
    )
    harmful_seed = forms.IntegerField(
        initial=0, min_value=0, max_value=MAX_SEED, required=False, label="Harmful-control seed"
    )

    def clean_slug(self):
        slug = self.cleaned_data["slug"]
        if problem := study_address_problem(slug):
            raise forms.ValidationError(problem)
        return slug

    def harmful_choice(self) -> tuple[float | None, int]:
        """(share or None, seed) for ``study_plan_draft``."""
        data = self.cleaned_data
        if not data.get("harmful_controls"):
            return None, 0
        share = data.get("harmful_share")
        return (DEFAULT_HARMFUL_SHARE if share is None else share), data.get("harmful_seed") or 0

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("base_prompts") == "upload" and not cleaned.get("base_prompts_file"):
            self.add_error("base_prompts_file", "Choose a file, or a shipped prompt set.")
        upload = cleaned.get("base_prompts_file")
        if upload and not upload.name.lower().endswith((".csv", ".json", ".jsonl")):
            self.add_error("base_prompts_file", "Upload a .csv, .json or .jsonl file.")
        taxonomy = cleaned.get("taxonomy_file")
        if taxonomy and not taxonomy.name.lower().endswith(".json"):
            self.add_error("taxonomy_file", "Upload a .json taxonomy.")
        return cleaned

    def shipped_base_prompts_path(self):
        return OVERT_MINI_PATH if self.cleaned_data["base_prompts"] == "overt" else None


def configured_generators() -> list[tuple[str, str]]:
    return [
        (name, f"{name} ({config.get('kind', '?')})")
        for name, config in settings.ACRB_GENERATORS.items()
    ]


class GeneratorAttachForm(forms.Form):
    name = forms.ChoiceField(choices=configured_generators)
    seeds = forms.CharField(initial="0", help_text="Seeds per prompt, comma-separated.")

    def clean_seeds(self):
        try:
            seeds = [int(part) for part in self.cleaned_data["seeds"].split(",") if part.strip()]
        except ValueError as error:
            raise forms.ValidationError("Seeds are whole numbers separated by commas.") from error
        if not seeds:
            raise forms.ValidationError("Give at least one seed.")
        return seeds


class FaceEditAcceptForm(forms.Form):
    accepted = forms.TypedChoiceField(
        choices=[("1", "accept"), ("0", "reject")], coerce=lambda v: v == "1"
    )

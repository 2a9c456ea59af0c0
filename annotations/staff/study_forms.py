"""The "new study" form: name and mode, images (files or a zip), attributes (CSV or form)."""

from __future__ import annotations

from django import forms
from django.utils.text import slugify

from annotations.common.study_address import study_address_problem
from annotations.models import Study

# Read whole into memory: 20 MB is some 100,000 rows, more than any study's images.
MAX_ATTRIBUTES_BYTES = 20 * 1024 * 1024


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files in one input (Django's documented recipe); cleans to a list."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput(attrs={"accept": "image/*"}))
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, (list, tuple)):
            return [single(one, initial) for one in data if one]
        return [single(data, initial)] if data else []


def _default(label: str, help_text: str = ""):
    return forms.CharField(max_length=500, required=False, label=label, help_text=help_text)


class StudyNewForm(forms.Form):
    name = forms.CharField(max_length=200)
    slug = forms.SlugField(
        max_length=100,
        required=False,
        label="Address",
        help_text="The study's short name in URLs and commands; empty = made from the name.",
    )
    mode = forms.ChoiceField(choices=Study.Mode.choices, initial=Study.Mode.T2I)
    images = MultipleFileField(
        required=False, help_text="Pick the image files (up to 100; use a zip for more)."
    )
    archive = forms.FileField(
        required=False,
        label="or a zip of images",
        help_text="A .zip of the images (folders allowed), or one with its own .jsonl manifest.",
        widget=forms.ClearableFileInput(attrs={"accept": ".zip,application/zip"}),
    )
    attributes = forms.FileField(
        required=False,
        label="Attributes CSV",
        help_text=(
            "One row per image: image, and any of item_id, generator, prompt, base_prompt_id, "
            "domain, attribute, attribute_value, cue, source_image, intent (benign or harmful). Columns left out come from "
            "the fields below."
        ),
        widget=forms.ClearableFileInput(attrs={"accept": ".csv,text/csv"}),
    )
    generator = _default("Generator", "e.g. sdxl-1.0")
    prompt = _default("Prompt")
    domain = _default("Domain", "e.g. occupation")
    attribute = _default("Attribute", "e.g. nationality; 'neutral' for the baseline")
    attribute_value = _default("Attribute value", "e.g. Korean; 'neutral' for the baseline")

    DEFAULT_FIELDS = ("generator", "prompt", "domain", "attribute", "attribute_value")

    def clean_attributes(self):
        upload = self.cleaned_data.get("attributes")
        if upload is not None and upload.size > MAX_ATTRIBUTES_BYTES:
            raise forms.ValidationError(
                f"{upload.name} is {upload.size} bytes; an attributes CSV may have at most "
                f"{MAX_ATTRIBUTES_BYTES} (one row per image)"
            )
        return upload

    def clean_slug(self):
        slug = self.cleaned_data.get("slug") or slugify(self.data.get("name", ""))[:100]
        if not slug:
            raise forms.ValidationError("give the study a name with letters or digits")
        if problem := study_address_problem(slug):
            raise forms.ValidationError(problem)
        if Study.objects.filter(slug=slug).exists():
            raise forms.ValidationError(f"a study with the address {slug!r} already exists")
        return slug

    def clean(self):
        cleaned = super().clean()
        has_images = bool(cleaned.get("images"))
        has_archive = cleaned.get("archive") is not None
        if has_images == has_archive and "images" not in self.errors:
            self.add_error(
                "images",
                "pick image files or a zip"
                if not has_images
                else "pick image files or a zip, not both",
            )
        return cleaned

    def defaults(self) -> dict[str, str]:
        return {field: self.cleaned_data.get(field) or "" for field in self.DEFAULT_FIELDS}

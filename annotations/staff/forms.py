from dataclasses import fields as dataclass_fields

from django import forms

from annotations.batches.request import NAME_MAX_LENGTH, NUMBER_OPTIONS, BatchRequest, NumberOption
from annotations.common.form_keys import OneTimeKeyForm
from annotations.models import Annotator, Batch, Study
from annotations.staff.audit_context import audit_context_errors


class AnnotatorChoiceField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj):
        return f"{obj.user.get_username()} ({obj.group or 'no group'})"


def _annotator_field(**kwargs):
    return AnnotatorChoiceField(
        queryset=Annotator.objects.filter(is_active=True)
        .select_related("user")
        .order_by("user__username"),
        widget=forms.CheckboxSelectMultiple,
        **kwargs,
    )


# Each BatchRequest field's default: an empty form field takes it.
BATCH_DEFAULTS = {f.name: f.default for f in dataclass_fields(BatchRequest)}


def _number_field(option: NumberOption) -> forms.Field:
    """A batch option's form field, from its one definition (annotations/batches/request.py):
    optional (empty: the option's default), with the bounds the request check uses."""
    field_class = forms.IntegerField if option.kind is int else forms.FloatField
    return field_class(
        required=False,
        min_value=option.minimum,
        max_value=option.maximum,
        initial=BATCH_DEFAULTS[option.name],
        label=option.label[:1].upper() + option.label[1:],
        help_text=option.help,
    )


class BatchCreateForm(forms.Form):
    """The new-batch page: its values go to ``services.batch_request_build`` as they are
    (``request_options``), which checks them together."""

    name = forms.CharField(max_length=NAME_MAX_LENGTH)
    policy = forms.ChoiceField(
        choices=[c for c in Batch.Policy.choices if c[0] != Batch.Policy.IMPORTED]
    )
    annotators = _annotator_field()
    manual_pairs = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="Manual policy only: one 'item_id,username' per line.",
    )
    # The number options follow (NUMBER_OPTIONS, added below); a new one comes last.
    field_order = ["name", "policy", "overlap_k", "annotators", "seed", "gold_per_annotator"]
    field_order += ["gold_rate", "manual_pairs"]

    def request_options(self) -> dict:
        """The cleaned values that are ``BatchRequest`` fields (annotators go separately)."""
        return {k: v for k, v in self.cleaned_data.items() if k in BATCH_DEFAULTS}


for _option in NUMBER_OPTIONS:
    BatchCreateForm.base_fields[_option.name] = _number_field(_option)


class AddAnnotatorsForm(forms.Form):
    annotators = _annotator_field()


class ReassignForm(forms.Form):
    from_annotator = forms.ModelChoiceField(
        queryset=Annotator.objects.select_related("user").order_by("user__username")
    )
    to_annotators = _annotator_field()


class ManifestUploadForm(forms.Form):
    manifest = forms.FileField(
        help_text="A .jsonl manifest, or a .zip holding one manifest and the images it names."
    )


class LabelImportForm(OneTimeKeyForm):
    """Labels from another tool (``importers.annotations_import``). ``request_key`` is a
    one-time key per rendered form, so a form sent twice imports once."""

    labels = forms.FileField(allow_empty_file=True)
    create_annotators = forms.BooleanField(required=False)
    allow_staff_annotators = forms.BooleanField(required=False)


class ItemExcludeForm(forms.Form):
    reason = forms.CharField(
        max_length=2000,
        widget=forms.TextInput(attrs={"placeholder": "e.g. image corrupt in every copy"}),
        help_text="Required: kept on the item and listed in the metrics export.",
    )


class ItemReviewNoteForm(forms.Form):
    reason = forms.CharField(max_length=2000, required=False, label="Note (optional)")


class ItemImageReplaceForm(forms.Form):
    image = forms.FileField(help_text="The corrected image (PNG, JPEG, WebP...).")
    reason = forms.CharField(max_length=2000, required=False, label="Note (optional)")


def _context_text(label: str, help_text: str, rows: int = 3):
    return forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": rows}),
        label=label,
        help_text=help_text,
    )


class StudyAuditContextForm(forms.Form):
    """The study's audit context (annotations.staff.audit_context); the rules live in the service."""

    system_kind = forms.ChoiceField(
        choices=[("", "not stated")] + list(Study.SystemKind.choices),
        required=False,
        label="System audited",
        help_text="Picks the obligations the report maps its evidence to (report: legal mapping).",
    )
    intended_purpose = _context_text(
        "Intended purpose", "The audited system's intended purpose, in the provider's words."
    )
    annotator_recruitment = _context_text(
        "Annotator recruitment", "How annotators were recruited and selected (platform, criteria)."
    )
    annotator_pay = _context_text(
        "Annotator pay", "How annotators were paid (rate, currency, basis: hour or item).", rows=2
    )

    def clean(self):
        # The service's rules, so every bad field shows at once (the service checks them again).
        cleaned = super().clean()
        for field, message in audit_context_errors(cleaned).items():
            self.add_error(field, message)
        return cleaned

import secrets

from django import forms

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


class BatchCreateForm(forms.Form):
    name = forms.CharField(max_length=200)
    policy = forms.ChoiceField(
        choices=[c for c in Batch.Policy.choices if c[0] != Batch.Policy.IMPORTED]
    )
    overlap_k = forms.IntegerField(min_value=1, max_value=50, initial=2)
    annotators = _annotator_field()
    seed = forms.IntegerField(
        required=False,
        min_value=0,
        help_text="Leave empty for a fresh random seed (stored on the batch).",
    )
    gold_per_annotator = forms.IntegerField(min_value=0, initial=0)
    gold_rate = forms.FloatField(
        min_value=0.0,
        max_value=0.5,
        initial=0.0,
        required=False,
        help_text="Share of each queue that is gold (e.g. 0.05), at random positions.",
    )
    manual_pairs = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="Manual policy only: one 'item_id,username' per line.",
    )
    budget = forms.IntegerField(
        required=False,
        min_value=1,
        help_text="Items humans label. Validate the judge: required. k-overlap and "
        "expertise: a uniform random sample of this many items (empty: every item).",
    )
    min_per_value = forms.IntegerField(
        required=False,
        min_value=0,
        label="Minimum per attribute value",
        help_text="Validate the judge: items per attribute value at least "
        "(empty: half the budget spread evenly over the values).",
    )

    qualification_items = forms.IntegerField(
        required=False,
        min_value=0,
        initial=0,
        label="Qualification: gold items",
        help_text="0 or empty: no qualification round. N: each annotator first answers N gold "
        "items and starts the batch only if they pass.",
    )
    qualification_pass_mark = forms.FloatField(
        required=False,
        label="Qualification: pass mark",
        help_text="Share of gold answers that must match the gold label, in (0, 1], e.g. 0.8.",
    )
    qualification_attempts = forms.IntegerField(
        required=False,
        min_value=1,
        initial=1,
        label="Qualification: attempts",
        help_text="Attempts each annotator has, each with new gold items (staff can allow more).",
    )

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("policy") == Batch.Policy.VALIDATE_JUDGE and not cleaned.get("budget"):
            self.add_error(
                "budget", "Validate the judge needs a budget: how many items humans label."
            )
        if cleaned.get("policy") == Batch.Policy.MANUAL and cleaned.get("budget"):
            self.add_error("budget", "Manual pairs take no budget: list the pairs instead.")
        return cleaned


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


class LabelImportForm(forms.Form):
    """Labels from another tool (``importers.annotations_import``). ``request_key`` is a
    one-time key per rendered form, so a form sent twice imports once."""

    labels = forms.FileField(allow_empty_file=True)
    create_annotators = forms.BooleanField(required=False)
    allow_staff_annotators = forms.BooleanField(required=False)
    request_key = forms.CharField(max_length=64, required=False, widget=forms.HiddenInput)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.is_bound:
            self.initial["request_key"] = secrets.token_urlsafe(32)


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

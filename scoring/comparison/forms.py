"""The comparison page's choices: the studies, the two models to compare and the source."""

from __future__ import annotations

from django import forms

from annotations.models import Study


class StudyChoices(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj):
        return f"{obj.name} ({obj.slug})"


class ComparisonForm(forms.Form):
    studies = StudyChoices(
        queryset=Study.objects.order_by("name"),
        to_field_name="slug",
        widget=forms.CheckboxSelectMultiple,
        help_text="One study: its generators side by side. Two or more: the studies side by side.",
    )
    baseline = forms.CharField(required=False, label="Baseline (A)")
    candidate = forms.CharField(required=False, label="Candidate (B)")
    source = forms.CharField(required=False, label="Labels from")

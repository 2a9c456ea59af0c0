from django import forms
from django.contrib import admin

from annotations.common.study_address import study_address_problem
from annotations.qualification import admin as qualification_admin  # noqa: F401  (registers its tables)
from annotations.recruitment import admin as recruitment_admin  # noqa: F401  (registers its tables)

from .models import (
    Annotation,
    AnnotationHistory,
    Annotator,
    Assignment,
    AttributeValue,
    AutomatedJudgment,
    BackgroundJob,
    Batch,
    Item,
    Study,
)


class StudyAdminForm(forms.ModelForm):
    def clean_slug(self):
        # The one study-address rule (annotations/common/study_address.py), here too.
        slug = self.cleaned_data["slug"]
        if problem := study_address_problem(slug):
            raise forms.ValidationError(problem)
        return slug


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    form = StudyAdminForm
    list_display = [
        "slug",
        "name",
        "mode",
        "overlap_k",
        "system_kind",
        "is_synthetic_demo",
        "created_at",
    ]
    prepopulated_fields = {"slug": ["name"]}
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "name",
                    "slug",
                    "mode",
                    "overlap_k",
                    "label_scheme",
                    "description",
                    "min_seconds_per_item",
                    "is_synthetic_demo",
                ]
            },
        ),
        # Read by the audit report: the legal mapping and the annotator-pool section.
        (
            "What was audited (report: legal mapping)",
            {"fields": ["system_kind", "intended_purpose"]},
        ),
        (
            "Annotator pool (report: the people and the data)",
            {"fields": ["annotator_recruitment", "annotator_pay"]},
        ),
    ]


@admin.register(AttributeValue)
class AttributeValueAdmin(admin.ModelAdmin):
    list_display = ["study", "attribute", "value", "is_neutral"]
    list_filter = ["study", "attribute"]


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = [
        "item_id",
        "study",
        "attribute_value",
        "generator",
        "domain",
        "is_gold",
        "needs_review",
    ]
    list_filter = ["study", "is_gold", "needs_review", "generator", "domain"]
    search_fields = ["item_id", "prompt"]
    list_select_related = ["study", "attribute_value"]
    raw_id_fields = ["attribute_value"]
    # Images enter only through the checked paths (import, the staff "replace image" page),
    # which decode them and choose their names (annotations.common.media).
    readonly_fields = ["image", "source_image"]
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "study",
                    "item_id",
                    "image",
                    "source_image",
                    "mode",
                    "generator",
                    "prompt",
                    "base_prompt_id",
                    "domain",
                    "attribute_value",
                    "cue",
                ]
            },
        ),
        ("Provider refusal", {"fields": ["provider_refusal_code", "provider_refusal_message"]}),
        (
            "Gold answer (staff only; never shown to annotators)",
            {"fields": ["is_gold", "gold_hard_refusal", "gold_cue"]},
        ),
        ("Review", {"fields": ["needs_review"]}),
    ]


@admin.register(AutomatedJudgment)
class AutomatedJudgmentAdmin(admin.ModelAdmin):
    list_display = ["item", "judge", "judge_version", "hard_refusal", "cue_label", "confidence"]
    list_filter = ["judge"]
    raw_id_fields = ["item"]


@admin.register(Annotator)
class AnnotatorAdmin(admin.ModelAdmin):
    list_display = ["user", "group", "expertise", "language", "is_active"]
    list_filter = ["group", "is_active"]

    def get_readonly_fields(self, request, obj=None):
        # The account is the author of every answer of this annotator: fixed once created.
        return ["user"] if obj is not None else []


@admin.register(Batch)
class BatchAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "study",
        "policy",
        "overlap_k",
        "seed",
        "probability_sample",
        "created_at",
    ]
    # Decided by batch_create from the items drawn (docs/annotation.md, "Batches from a subset").
    readonly_fields = ["probability_sample", "probability_sample_reason"]


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    """Read-only: an assignment carries its answer's author, so changing its annotator, item
    or state here would move or hide an answer without a history row. Staff reassign and
    pause on the study pages (services), which keep the old rows."""

    list_display = ["batch", "item", "annotator", "position", "is_active"]
    list_select_related = ["batch__study", "item__study", "annotator__user"]
    raw_id_fields = ["item", "annotator", "batch", "reassigned_from"]
    readonly_fields = [f.name for f in Assignment._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class HistoryInline(admin.TabularInline):
    model = AnnotationHistory
    extra = 0
    can_delete = False
    readonly_fields = [
        "revision",
        "hard_refusal",
        "cue_label",
        "note",
        "broken_image",
        "recorded_at",
        "recorded_by",
    ]

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Annotation)
class AnnotationAdmin(admin.ModelAdmin):
    """Answers are read-only here: edits go through the survey so history is always written."""

    list_display = [
        "id",
        "annotator",
        "item",
        "label",
        "broken_image",
        "revision",
        "too_fast",
        "submitted_at",
    ]
    list_filter = ["too_fast", "hard_refusal", "cue_label", "broken_image", "source"]
    # One join for the whole page: annotator, item and study are columns, not a query per row.
    list_select_related = ["assignment__annotator__user", "assignment__item__study"]
    search_fields = ["assignment__item__item_id", "assignment__annotator__user__username"]
    inlines = [HistoryInline]
    readonly_fields = [f.name for f in Annotation._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="annotator", ordering="assignment__annotator__user__username")
    def annotator(self, obj):
        return obj.assignment.annotator.user.get_username()

    @admin.display(description="item", ordering="assignment__item__item_id")
    def item(self, obj):
        return str(obj.assignment.item)

    @admin.display(description="label")
    def label(self, obj):
        return "hard refusal" if obj.hard_refusal else f"not refused · cue {obj.cue_label}"


@admin.register(BackgroundJob)
class BackgroundJobAdmin(admin.ModelAdmin):
    list_display = ["kind", "study", "status", "done", "total", "created_at"]

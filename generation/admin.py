from django.contrib import admin

from generation.models import (
    FaceEdit,
    FaceSet,
    FaceTemplate,
    GenerationRequest,
    PlannedPrompt,
    StudyGenerator,
    StudyPlan,
)


@admin.register(StudyPlan)
class StudyPlanAdmin(admin.ModelAdmin):
    list_display = ("study", "taxonomy_source", "base_prompts_source", "updated_at")


@admin.register(PlannedPrompt)
class PlannedPromptAdmin(admin.ModelAdmin):
    list_display = ("plan_id", "study", "attribute", "value", "status", "skip_reason")
    list_filter = ("status", "attribute")
    search_fields = ("plan_id", "text")


@admin.register(StudyGenerator)
class StudyGeneratorAdmin(admin.ModelAdmin):
    list_display = ("study", "name", "seeds")


@admin.register(GenerationRequest)
class GenerationRequestAdmin(admin.ModelAdmin):
    list_display = ("pk", "study", "generator", "seed", "status", "attempts")
    list_filter = ("status",)
    raw_id_fields = ("planned_prompt", "item")


@admin.register(FaceSet)
class FaceSetAdmin(admin.ModelAdmin):
    """The one face-set admin: a REFLECT set's protocol (its task templates) is edited here,
    as are an edit job's settings."""

    list_display = ("name", "slug", "generator_name", "created_at")
    search_fields = ("name", "slug")


@admin.register(FaceTemplate)
class FaceTemplateAdmin(admin.ModelAdmin):
    list_display = ("face_set", "occupation", "name", "source_gender")
    list_filter = ("face_set", "occupation")
    readonly_fields = ("image", "image_sha256")  # images enter through checked imports only


@admin.register(FaceEdit)
class FaceEditAdmin(admin.ModelAdmin):
    list_display = ("template", "race", "gender", "status", "flagged", "accepted_by_staff")
    list_filter = ("status", "flagged", "accepted_by_staff")
    readonly_fields = ("image", "image_sha256")

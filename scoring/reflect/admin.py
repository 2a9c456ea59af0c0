"""Admin: edit a face set's protocol (its task templates), accept images and biographies."""

from django.contrib import admin

from .models import Biography, FaceImage, FaceSet, FaceTemplate, ReflectRun


@admin.register(FaceSet)
class FaceSetAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "created_at")
    search_fields = ("name",)


@admin.register(FaceTemplate)
class FaceTemplateAdmin(admin.ModelAdmin):
    list_display = ("face_set", "occupation", "name", "source_gender")
    list_filter = ("face_set", "occupation")


@admin.register(FaceImage)
class FaceImageAdmin(admin.ModelAdmin):
    list_display = ("template", "race", "gender", "variant", "accepted")
    list_filter = ("variant", "accepted", "race", "gender")
    readonly_fields = ("sha256", "file")


@admin.register(Biography)
class BiographyAdmin(admin.ModelAdmin):
    list_display = ("face_set", "occupation", "key", "accepted")
    list_filter = ("face_set", "occupation", "accepted")
    readonly_fields = ("leakage_flags",)


@admin.register(ReflectRun)
class ReflectRunAdmin(admin.ModelAdmin):
    list_display = ("face_set", "label", "model_name", "prompt_version", "created_at")
    readonly_fields = [f.name for f in ReflectRun._meta.fields]

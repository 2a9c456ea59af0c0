"""Admin: accept images and biographies. Face sets and templates (with each set's protocol)
are edited in the one face-set admin, generation/admin.py."""

from django.contrib import admin

from .models import Biography, FaceImage, ReflectRun


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

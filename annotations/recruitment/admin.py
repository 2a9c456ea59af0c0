"""Admin views of the recruitment tables: read-only, because consent versions and records are
evidence, and links are made and revoked on the staff recruitment page."""

from django.contrib import admin

from .models import ConsentRecord, InviteLink, PanelLink, PanelParticipant, StudyConsent


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(StudyConsent)
class StudyConsentAdmin(ReadOnlyAdmin):
    list_display = ["study", "version", "created_at", "created_by"]
    list_filter = ["study"]


@admin.register(ConsentRecord)
class ConsentRecordAdmin(ReadOnlyAdmin):
    list_display = ["annotator", "study", "version", "agreed_at"]
    list_filter = ["study", "version"]


@admin.register(InviteLink)
class InviteLinkAdmin(ReadOnlyAdmin):
    list_display = ["pk", "batch", "group", "expires_at", "used_at", "revoked_at", "annotator"]
    list_filter = ["batch__study", "group"]
    exclude = ["token_sha256"]


@admin.register(PanelLink)
class PanelLinkAdmin(ReadOnlyAdmin):
    list_display = ["name", "batch", "group", "participant_param", "closed_at"]


@admin.register(PanelParticipant)
class PanelParticipantAdmin(ReadOnlyAdmin):
    list_display = ["participant_id", "panel_link", "enrolled_at", "completed_at"]
    list_filter = ["study", "panel_link"]
    exclude = ["browser_key_sha256"]

from django.contrib import admin

from .models import JudgeResponse, RefusalThreshold, ScoringBatch


@admin.register(RefusalThreshold)
class RefusalThresholdAdmin(admin.ModelAdmin):
    list_display = [
        "study",
        "judge",
        "judge_version",
        "generator",
        "tau",
        "criterion",
        "f1",
        "n",
        "created_at",
    ]
    list_filter = ["judge", "criterion"]
    readonly_fields = ["created_at"]


@admin.register(ScoringBatch)
class ScoringBatchAdmin(admin.ModelAdmin):
    list_display = [
        "job",
        "index",
        "status",
        "done_items",
        "error_items",
        "attempts",
        "finished_at",
    ]
    list_filter = ["status"]


@admin.register(JudgeResponse)
class JudgeResponseAdmin(admin.ModelAdmin):
    list_display = ["key", "judge", "judge_version", "created_at"]
    list_filter = ["judge", "judge_version"]
    search_fields = ["key"]

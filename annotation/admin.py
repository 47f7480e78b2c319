from django.contrib import admin

from .models import Assignment, CampaignProtocol, Judge, Judgment


@admin.register(Judge)
class JudgeAdmin(admin.ModelAdmin):
    list_display = ["pseudonym", "campaign", "english_level", "created_at", "finished_at"]
    list_filter = ["campaign", "english_level"]
    exclude = ["token"]


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["judge", "pair", "position", "is_training", "top", "assigned_at", "shown_at"]
    list_filter = ["judge__campaign", "is_training"]
    raw_id_fields = ["judge", "pair"]


@admin.register(Judgment)
class JudgmentAdmin(admin.ModelAdmin):
    list_display = ["judge", "pair", "label", "is_training", "response_ms", "created_at"]
    list_filter = ["pair__campaign", "label", "is_training"]
    raw_id_fields = ["assignment", "judge", "pair"]


@admin.register(CampaignProtocol)
class CampaignProtocolAdmin(admin.ModelAdmin):
    list_display = ["campaign", "control_share", "max_judges", "completion_code"]

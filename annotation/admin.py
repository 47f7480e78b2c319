from django.contrib import admin

from campaigns.admin import VisibleCampaignsAdmin, related_only

from .models import Assignment, CampaignProtocol, Judge, Judgment


@admin.register(Judge)
class JudgeAdmin(VisibleCampaignsAdmin):
    list_display = ["pseudonym", "campaign", "english_level", "created_at", "finished_at"]
    list_filter = [*related_only("campaign"), "english_level"]
    exclude = ["token"]


@admin.register(Assignment)
class AssignmentAdmin(VisibleCampaignsAdmin):
    campaign_path = "judge__campaign"
    list_display = ["judge", "pair", "position", "is_training", "top", "assigned_at", "shown_at"]
    list_filter = ["is_training"]
    raw_id_fields = ["judge", "pair"]


@admin.register(Judgment)
class JudgmentAdmin(VisibleCampaignsAdmin):
    campaign_path = "pair__campaign"
    list_display = ["judge", "pair", "label", "is_training", "response_ms", "created_at"]
    list_filter = ["label", "is_training"]
    raw_id_fields = ["assignment", "judge", "pair"]


@admin.register(CampaignProtocol)
class CampaignProtocolAdmin(VisibleCampaignsAdmin):
    list_display = ["campaign", "control_share", "max_judges", "completion_code"]

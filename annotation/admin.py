from django.contrib import admin

from campaigns.admin import EvidenceAdmin, VisibleCampaignsAdmin, related_only

from .models import Assignment, CampaignProtocol, Judge, Judgment

# Judges (their questionnaire answers), assignments and judgments are evidence: read-only.


@admin.register(Judge)
class JudgeAdmin(EvidenceAdmin):
    list_display = ["pseudonym", "campaign", "english_level", "created_at", "finished_at"]
    list_filter = [*related_only("campaign"), "english_level"]
    exclude = ["token"]


@admin.register(Assignment)
class AssignmentAdmin(EvidenceAdmin):
    campaign_path = "judge__campaign"
    list_display = ["judge", "pair", "position", "is_training", "top", "assigned_at", "shown_at"]
    list_filter = ["is_training"]


@admin.register(Judgment)
class JudgmentAdmin(EvidenceAdmin):
    campaign_path = "pair__campaign"
    list_display = ["judge", "pair", "label", "is_training", "response_ms", "created_at"]
    list_filter = ["label", "is_training"]


@admin.register(CampaignProtocol)
class CampaignProtocolAdmin(VisibleCampaignsAdmin):
    list_display = ["campaign", "control_share", "max_judges", "completion_code"]

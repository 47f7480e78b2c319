from django.contrib import admin

from campaigns.admin import EvidenceAdmin, VisibleCampaignsAdmin, related_only

from .models import Answer, Assignment, CampaignProtocol, Judge, Judgment
from .tasktypes.similarity.scale import VOTE

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


class FiveWayAnswerFilter(admin.SimpleListFilter):
    """The judgments giving one 5-way answer (kept in `Judgment.values`, under the scale's key)."""

    title = "5-way answer"
    parameter_name = "answer"

    def lookups(self, request, model_admin):
        return Answer.choices

    def queryset(self, request, queryset):
        if self.value() not in Answer.values:
            return queryset
        return queryset.filter(**{VOTE.lookup: self.value()})


@admin.register(Judgment)
class JudgmentAdmin(EvidenceAdmin):
    campaign_path = "pair__campaign"
    list_display = ["judge", "pair", "values", "is_training", "response_ms", "created_at"]
    list_filter = [FiveWayAnswerFilter, "is_training"]


@admin.register(CampaignProtocol)
class CampaignProtocolAdmin(VisibleCampaignsAdmin):
    list_display = ["campaign", "control_share", "max_judges", "completion_code"]

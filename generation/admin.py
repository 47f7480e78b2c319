from django.contrib import admin

from campaigns.admin import EvidenceAdmin, VisibleCampaignsAdmin, related_only

from .models import GenerationOutput, GenerationRun, GenerationSource, PromptTemplate


@admin.register(PromptTemplate)
class PromptTemplateAdmin(VisibleCampaignsAdmin):
    list_display = ["name", "campaign", "created_by", "updated_at"]
    list_filter = related_only("campaign")
    search_fields = ["name"]


# A run, its sources and its outputs record what a model was given and what it said: read-only.


@admin.register(GenerationRun)
class GenerationRunAdmin(EvidenceAdmin):
    list_display = ["pk", "campaign", "model", "decoding", "status", "created_at", "finished_at"]
    list_filter = ["status", *related_only("campaign")]


@admin.register(GenerationSource)
class GenerationSourceAdmin(EvidenceAdmin):
    campaign_path = "run__campaign"
    list_display = ["run", "position", "external_id", "text"]


@admin.register(GenerationOutput)
class GenerationOutputAdmin(EvidenceAdmin):
    campaign_path = "run__campaign"
    list_display = ["run", "source", "template", "candidate", "accepted", "reject_reason"]
    list_filter = ["accepted", "reject_reason", "template"]

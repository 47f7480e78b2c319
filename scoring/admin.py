from django.contrib import admin

from campaigns.admin import VisibleCampaignsAdmin

from .models import Score


@admin.register(Score)
class ScoreAdmin(VisibleCampaignsAdmin):
    campaign_path = "pair__campaign"
    list_display = ["pair", "metric", "value", "signature", "created_at"]
    list_filter = ["metric"]
    raw_id_fields = ["pair"]

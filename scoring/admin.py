from django.contrib import admin

from campaigns.admin import EvidenceAdmin

from .models import Score


@admin.register(Score)
class ScoreAdmin(EvidenceAdmin):
    """Scores are what a metric computed: read-only, like judgments."""

    campaign_path = "pair__campaign"
    list_display = ["pair", "metric", "value", "signature", "created_at"]
    list_filter = ["metric"]

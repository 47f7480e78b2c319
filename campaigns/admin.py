from django.contrib import admin

from .models import Campaign, Pair


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "pairs_per_judge", "overlap_target", "is_open", "created_at"]
    list_filter = ["is_open"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    # Checked against annotation's registry, which this layer cannot import: not edited here.
    readonly_fields = ["task_type"]


@admin.register(Pair)
class PairAdmin(admin.ModelAdmin):
    list_display = ["external_id", "campaign", "corpus", "gold_label", "is_training"]
    list_filter = ["campaign", "corpus", "is_training", "gold_label"]
    search_fields = ["external_id", "source", "hypothesis"]

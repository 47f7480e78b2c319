from django.contrib import admin

from .models import Campaign, GenerationOutput, GenerationRun, GenerationSource, Pair, PromptTemplate


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


@admin.register(PromptTemplate)
class PromptTemplateAdmin(admin.ModelAdmin):
    list_display = ["name", "campaign", "created_by", "updated_at"]
    list_filter = ["campaign"]
    search_fields = ["name"]


@admin.register(GenerationRun)
class GenerationRunAdmin(admin.ModelAdmin):
    list_display = ["pk", "campaign", "model", "decoding", "status", "created_at", "finished_at"]
    list_filter = ["status", "campaign"]


@admin.register(GenerationSource)
class GenerationSourceAdmin(admin.ModelAdmin):
    list_display = ["run", "position", "external_id", "text"]
    raw_id_fields = ["run"]


@admin.register(GenerationOutput)
class GenerationOutputAdmin(admin.ModelAdmin):
    list_display = ["run", "source", "template", "candidate", "accepted", "reject_reason"]
    list_filter = ["accepted", "reject_reason", "template"]
    raw_id_fields = ["run", "source", "pair"]

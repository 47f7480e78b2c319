from django.contrib import admin

from .models import GenerationOutput, GenerationRun, GenerationSource, PromptTemplate


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

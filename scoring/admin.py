from django.contrib import admin

from .models import Score


@admin.register(Score)
class ScoreAdmin(admin.ModelAdmin):
    list_display = ["pair", "metric", "value", "signature", "created_at"]
    list_filter = ["metric", "pair__campaign"]
    raw_id_fields = ["pair"]

"""The Django admin, filtered through the same visibility rule as the researcher pages.

A staff user sees, in every list and form, only the rows of campaigns they own or
that are shared with them (superusers see all); only a campaign's owner or a
superuser changes its sharing or deletes it. API keys are not in the admin: each
researcher manages their own on the API key page.
"""

from django.contrib import admin
from rest_framework.authtoken.models import TokenProxy

from .models import Campaign, Pair

# DRF's token admin would let any staff user with its permissions read every key.
if admin.site.is_registered(TokenProxy):
    admin.site.unregister(TokenProxy)


def related_only(*paths):
    """List filters that offer only the values present in the (already filtered) rows."""
    return [(path, admin.RelatedOnlyFieldListFilter) for path in paths]


class VisibleCampaignsAdmin(admin.ModelAdmin):
    """Rows reach a staff user only through a campaign they may see; `campaign_path` leads there."""

    campaign_path = "campaign"

    def get_queryset(self, request):
        visible = Campaign.objects.visible_to(request.user)
        return super().get_queryset(request).filter(**{f"{self.campaign_path}__in": visible})

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.related_model is Campaign:
            kwargs["queryset"] = Campaign.objects.visible_to(request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "pairs_per_judge", "overlap_target", "is_open", "created_at"]
    list_filter = ["is_open"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    # Checked against annotation's registry, which this layer cannot import: not edited here.
    readonly_fields = ["task_type"]

    def get_queryset(self, request):
        return Campaign.objects.visible_to(request.user)

    def get_readonly_fields(self, request, obj=None):
        fixed = list(self.readonly_fields)
        if request.user.is_superuser:
            return fixed
        if obj is None or obj.is_managed_by(request.user):
            return [*fixed, "created_by"]
        return [*fixed, "created_by", "shared_with"]

    def save_model(self, request, obj, form, change):
        if not change and not request.user.is_superuser:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)

    def delete_model(self, request, obj):
        obj.move_to_trash()  # recoverable, like every deletion (see the Trash page)

    def delete_queryset(self, request, queryset):
        for campaign in queryset:
            campaign.move_to_trash()

    def has_delete_permission(self, request, obj=None):
        allowed = super().has_delete_permission(request, obj)
        return allowed and (obj is None or obj.is_managed_by(request.user))


@admin.register(Pair)
class PairAdmin(VisibleCampaignsAdmin):
    list_display = ["external_id", "campaign", "corpus", "gold_label", "is_training"]
    list_filter = [*related_only("campaign"), "corpus", "is_training", "gold_label"]
    search_fields = ["external_id", "source", "hypothesis"]

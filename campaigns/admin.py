"""The Django admin, filtered through the same visibility rule as the researcher pages.

A staff user sees, in every list and form, only the rows of campaigns they own or
that are shared with them (superusers see all); only a campaign's owner or a
superuser changes its sharing, its slug, or deletes it. Every foreign key a form
offers (raw-id fields included) reaches only visible campaigns' rows, and a row never
moves to another campaign. What records what happened (judges, assignments,
judgments, scores, generation runs and their outputs) is evidence: the admin shows
it and never adds, changes or deletes it (`EvidenceAdmin`). API keys are not in the
admin: each researcher manages their own on the API key page. Pairs written here pass
the importer's checks (`validated_row`).
"""

from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import TokenProxy

from .forms import CampaignChoices
from .importers import CorpusImportError, validated_row
from .models import SLUG_NOT_AVAILABLE, TOKENISATION, Campaign, Pair, Score, slug_change_problem, tokens_of

# DRF's token admin would let any staff user with its permissions read every key.
if admin.site.is_registered(TokenProxy):
    admin.site.unregister(TokenProxy)


class SuperusersOnly:
    """An admin only superusers see (login attempts name addresses; lifting a lockout reopens guessing; users)."""

    def has_module_permission(self, request):
        return request.user.is_superuser

    def has_view_permission(self, request, obj=None):
        return request.user.is_superuser

    def has_add_permission(self, request, *args):
        return request.user.is_superuser and super().has_add_permission(request, *args)

    def has_change_permission(self, request, obj=None):
        return request.user.is_superuser and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser and super().has_delete_permission(request, obj)


# django-axes registers its admin (attempts, lockouts, logs) and Django its user and group admin
# for any staff user with model permissions: one would read addresses and lift lockouts, the other
# make itself a superuser. Both are the superuser's.
SUPERUSER_APPS = ("axes", "auth")
for _model, _model_admin in list(admin.site._registry.items()):
    if _model._meta.app_label in SUPERUSER_APPS:
        admin.site.unregister(_model)
        admin.site.register(_model, type(type(_model_admin).__name__, (SuperusersOnly, type(_model_admin)), {}))


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
        kwargs["queryset"] = self.admin_site_choices(db_field.related_model, request)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def admin_site_choices(self, model, request):
        """The rows of `model` a form may point at: visible campaigns' rows, oneself among users."""
        if model is Campaign:
            return Campaign.objects.visible_to(request.user)
        if model is get_user_model():
            users = model.objects.all()
            return users if request.user.is_superuser else users.filter(pk=request.user.pk)
        related = self.admin_site._registry.get(model)
        if isinstance(related, VisibleCampaignsAdmin):
            return related.get_queryset(request)
        return model.objects.none()  # a key into something no visibility rule covers: nothing to offer

    def get_readonly_fields(self, request, obj=None):
        fixed = list(super().get_readonly_fields(request, obj))
        if obj is not None:
            fixed.append(self.campaign_path.split("__")[0])  # a row never moves to another campaign
        if not request.user.is_superuser and any(f.name == "created_by" for f in self.model._meta.fields):
            fixed.append("created_by")
        return fixed

    def save_model(self, request, obj, form, change):
        if not change and hasattr(obj, "created_by_id") and not request.user.is_superuser:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)


class EvidenceAdmin(VisibleCampaignsAdmin):
    """What judges, metrics and models produced: shown to those who may see the campaign, never written here."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class CampaignAdminForm(CampaignChoices, forms.ModelForm):
    class Meta:
        model = Campaign
        fields = "__all__"
        error_messages = {"slug": {"unique": SLUG_NOT_AVAILABLE}}

    def clean_slug(self):
        slug = self.cleaned_data["slug"]
        problem = slug_change_problem(self.instance, slug, self.instance.is_managed_by(self.user))
        if problem:
            raise forms.ValidationError(problem)
        return slug


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    form = CampaignAdminForm
    list_display = ["name", "slug", "pairs_per_judge", "overlap_target", "is_open", "created_at"]
    list_filter = ["is_open"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    # Checked against annotation's registry, which this layer cannot import: not edited here.
    readonly_fields = ["task_type"]

    def get_queryset(self, request):
        return Campaign.objects.visible_to(request.user)

    def get_form(self, request, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)
        form.user = request.user
        return form

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

    def get_deleted_objects(self, objs, request):
        """Deleting moves to the trash: nothing below the campaign is deleted, so nothing else is listed."""
        campaigns = [str(campaign) for campaign in objs]
        return campaigns, {Campaign._meta.verbose_name_plural: len(campaigns)}, set(), []

    def delete_model(self, request, obj):
        obj.move_to_trash()  # recoverable, like every deletion (see the Trash page)

    def delete_queryset(self, request, queryset):
        for campaign in queryset:
            campaign.move_to_trash()

    def has_delete_permission(self, request, obj=None):
        allowed = super().has_delete_permission(request, obj)
        return allowed and (obj is None or obj.is_managed_by(request.user))


# A pair's fields that stay as they are once judges or metrics saw the pair.
FIXED_ONCE_SEEN = ("source", "hypothesis", "gold_tags")


class PairAdminForm(forms.ModelForm):
    """A pair as the importer would take it: the same checks, the same messages."""

    class Meta:
        model = Pair
        exclude = ["tokens"]

    def clean(self):
        # Fields shown read-only (the words judges or metrics saw) are not in the form: checked as the pair has them.
        kept = {name: getattr(self.instance, name) for name in FIXED_ONCE_SEEN if name not in self.fields}
        cleaned = kept | super().clean()
        metadata = cleaned.get("metadata")
        if metadata is not None and not isinstance(metadata, dict):
            raise forms.ValidationError("The metadata must be a JSON object (keys and values).")
        gold_tags = cleaned.get("gold_tags") or {}
        if not isinstance(gold_tags, dict):
            raise forms.ValidationError("The gold tags must be a JSON object with source and hypothesis lists.")
        record = {
            "id": cleaned.get("external_id") or "",
            "corpus": cleaned.get("corpus") or "",
            "source": cleaned.get("source") or "",
            "hypothesis": cleaned.get("hypothesis") or "",
            "label": cleaned.get("gold_label"),
            "metadata": metadata or {},
            **{f"{side}_tags": gold_tags.get(side) for side in ("source", "hypothesis") if side in gold_tags},
        }
        try:
            validated_row(record, location="this pair")
        except CorpusImportError as error:
            raise forms.ValidationError(str(error)) from None
        return cleaned


@admin.register(Pair)
class PairAdmin(VisibleCampaignsAdmin):
    form = PairAdminForm
    list_display = ["external_id", "campaign", "corpus", "gold_label", "is_training"]
    list_filter = [*related_only("campaign"), "corpus", "is_training", "gold_label"]
    search_fields = ["external_id", "source", "hypothesis"]

    def get_readonly_fields(self, request, obj=None):
        fixed = super().get_readonly_fields(request, obj)
        if obj is not None and (obj.assignments.exists() or obj.scores.exists()):
            # Judges and metrics saw these words: changing them would change what their evidence means.
            fixed += list(FIXED_ONCE_SEEN)
        return fixed

    def save_model(self, request, obj, form, change):
        obj.tokens, obj.tokenisation = tokens_of(obj.source, obj.hypothesis), TOKENISATION
        super().save_model(request, obj, form, change)

    def get_deleted_objects(self, objs, request):
        """As Django lists them, except that a pair's scores never refuse its deletion (one or in bulk): they are
        what metrics computed from the pair, and go with it. Deleting a score alone stays refused (`ScoreAdmin`),
        and so does deleting a pair that judges saw: their assignments and judgments are evidence."""
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        return deleted, counts, perms_needed - {Score._meta.verbose_name}, protected


@admin.register(Score)
class ScoreAdmin(EvidenceAdmin):
    """Scores are what a metric computed: read-only, like judgments."""

    campaign_path = "pair__campaign"
    list_display = ["pair", "metric", "value", "signature", "created_at"]
    list_filter = ["metric"]

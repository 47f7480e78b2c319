"""Researcher pages: the list of campaigns, creating one, opening and closing it, the trash, one's API key.

A campaign's dashboard, edit and upload pages show judging too: they are `annotation.researcher_views`;
reports and exports are `reports.views`.
"""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST
from rest_framework.authtoken.models import Token

from .access import campaign_for, researcher_required
from .forms import CampaignForm
from .models import Campaign


@researcher_required
def list_campaigns(request):
    campaigns = Campaign.objects.visible_to(request.user).with_counts()
    return render(request, "campaigns/list.html", {"campaigns": campaigns})


@researcher_required
def create_campaign(request):
    form = CampaignForm(request.POST if request.method == "POST" else None, owner=request.user)
    if request.method == "POST" and form.is_valid():
        campaign = form.save(commit=False)
        campaign.created_by = request.user
        campaign.save()
        campaign.ensure_training_pairs()
        messages.success(
            request, f"Campaign “{campaign.name}” created. Upload a corpus to give judges something to label."
        )
        return redirect(campaign)
    return render(request, "campaigns/form.html", {"form": form})


@researcher_required
@require_POST
def toggle_open(request, slug):
    campaign = campaign_for(request, slug)
    campaign.is_open = not campaign.is_open
    campaign.save(update_fields=["is_open", "updated_at"])
    messages.success(request, "Campaign opened." if campaign.is_open else "Campaign closed.")
    return redirect(campaign)


@never_cache  # the page shows a fresh key once: no cache may keep a copy
@researcher_required
def api_key(request):
    """The researcher's own API key: shown once when (re)generated, never anyone else's."""
    key = None
    if request.method == "POST":
        Token.objects.filter(user=request.user).delete()
        key = Token.objects.create(user=request.user).key
    has_key = Token.objects.filter(user=request.user).exists()
    return render(request, "campaigns/api_key.html", {"key": key, "has_key": has_key})


@researcher_required
def trash(request):
    """Deleted campaigns the researcher may bring back."""
    if request.method == "POST":
        campaign = get_object_or_404(Campaign.objects.trash_of(request.user), slug=request.POST.get("slug", ""))
        campaign.restore()
        messages.success(request, f"Campaign “{campaign.name}” restored (closed: reopen it when ready).")
        return redirect(campaign)
    return render(request, "campaigns/trash.html", {"campaigns": Campaign.objects.trash_of(request.user)})

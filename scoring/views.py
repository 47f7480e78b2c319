"""The scoring panel of a campaign's dashboard (an htmx partial, polled while workers score)."""

from django.shortcuts import render

from campaigns.views import campaign_for, researcher_required

from .service import scoring_progress


@researcher_required
def show_progress(request, slug):
    campaign = campaign_for(request, slug)
    context = {"campaign": campaign, "scoring": scoring_progress(campaign)}
    return render(request, "scoring/_progress.html", context)

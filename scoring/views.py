"""The scoring panel of a campaign's dashboard (an htmx partial, polled while workers score), and the staff page
of the queues."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import render

from campaigns.views import campaign_for, researcher_required
from parasol.queues import overview

from .dispatch import live_progress, scoring_passes

QUEUES_FOR_SUPERUSERS = (
    "The queues page is for superusers: it names every researcher's campaigns. "
    "Each campaign's own page shows its scoring progress."
)


@researcher_required
def show_progress(request, slug):
    campaign = campaign_for(request, slug)
    context = {"campaign": campaign, "scoring": live_progress(campaign)}
    return render(request, "scoring/_progress.html", context)


@login_required
def show_queues(request):
    # Superusers only: the page names every researcher's campaigns (a researcher trusts only their own).
    if not request.user.is_superuser:
        raise PermissionDenied(QUEUES_FOR_SUPERUSERS)
    context = overview()
    if "error" not in context:
        context["passes"] = scoring_passes()
    template = "scoring/_queues.html" if request.htmx else "scoring/queues.html"
    return render(request, template, context)

"""The scoring panel of a campaign's dashboard (an htmx partial, polled while workers score), and the staff page
of the queues."""

from django.contrib.auth.decorators import user_passes_test
from django.shortcuts import render

from campaigns.views import campaign_for, researcher_required
from parasol.queues import overview

from .dispatch import live_progress, scoring_passes


@researcher_required
def show_progress(request, slug):
    campaign = campaign_for(request, slug)
    context = {"campaign": campaign, "scoring": live_progress(campaign)}
    return render(request, "scoring/_progress.html", context)


# Superusers only: the page names every researcher's campaigns (a researcher trusts only their own).
@user_passes_test(lambda user: user.is_active and user.is_superuser, login_url="login")
def show_queues(request):
    context = overview()
    if "error" not in context:
        context["passes"] = scoring_passes()
    template = "scoring/_queues.html" if request.htmx else "scoring/queues.html"
    return render(request, template, context)

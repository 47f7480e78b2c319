"""The active choice panel of a campaign's page: where the waves stand, and the Draw action."""

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from campaigns.access import campaign_for, researcher_required
from reports.active import ActiveChoiceError, active_state, draw_active_choice


def _panel(request, campaign, drawn=None, refused=""):
    context = {
        "campaign": campaign,
        "state": active_state(campaign),
        "is_owner": campaign.created_by_id == request.user.pk,
        "drawn": drawn,
        "refused": refused,
    }
    return render(request, "reports/_active_choice.html", context)


@researcher_required
def show_active_choice(request, slug):
    campaign = campaign_for(request, slug)
    if not campaign.active_choice:
        raise Http404("This campaign does not use active choice.")
    return _panel(request, campaign)


@researcher_required
@require_POST
def draw_wave(request, slug):
    campaign = campaign_for(request, slug)
    if campaign.created_by_id != request.user.pk:  # drawing changes the design: its owner's decision only
        raise Http404("No campaign of yours has this name.")
    # The state is checked by the draw itself, whatever the page showed.
    try:
        drawn, refused = draw_active_choice(campaign), ""
    except ActiveChoiceError as error:
        drawn, refused = None, str(error)
    if not request.htmx:
        if refused:
            messages.error(request, f"No wave drawn: {refused}")
        return redirect(campaign.get_absolute_url())
    return _panel(request, campaign, drawn=drawn, refused=refused)

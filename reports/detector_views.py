"""The span detector panel of a span campaign's page: its stored detectors, retraining, and the stage while it runs."""

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from campaigns.access import campaign_for, researcher_required
from metrics.paratag import LATEST
from parasol.queues import QUEUED, TRAINING, waiting_on
from reports.detector import training_shortfall, training_status
from reports.detector_tables import detector_cards
from reports.tasks import queue_detector_training

POLL_SECONDS = 3


def _panel(request, campaign, refused=False):
    status = training_status(campaign.pk)
    running = bool(status and status.get("running"))
    context = {
        "campaign": campaign,
        "status": status,
        "refused": refused,
        "waiting": waiting_on(TRAINING) if status and status.get("stage") == QUEUED else None,
        # The button is offered only when training can run; otherwise it says what is missing.
        "shortfall": None if running else training_shortfall(campaign),
        "detectors": _records(detector_cards([campaign])),
        "scored_by": scored_by(campaign),
        "poll_seconds": POLL_SECONDS if status and status.get("running") else None,
    }
    return render(request, "reports/_detector.html", context)


def scored_by(campaign) -> str:
    """Which detector metric `paratag` uses for this campaign, in words (its own latest, or the version it names)."""
    detector_campaign, version = campaign.detector_choice()
    if version == LATEST:
        return "this campaign's latest detector"
    owner = "this campaign" if detector_campaign == campaign.pk else f"campaign {detector_campaign}"
    return f"detector {version} of {owner} (named in the campaign's settings)"


def _records(frame):
    """Rows for the template, a missing figure (no judges to compare) as None rather than NaN."""
    return frame.astype(object).where(frame.notna(), None).to_dict("records")


@researcher_required
def show_detector(request, slug):
    return _panel(request, campaign_for(request, slug))


@researcher_required
@require_POST
def train_detector(request, slug):
    campaign = campaign_for(request, slug)
    # Checked here, not only by the disabled button: a POST that cannot train queues nothing.
    shortfall = training_shortfall(campaign)
    queued = shortfall is None and queue_detector_training(campaign)
    if not request.htmx:
        if shortfall:
            messages.error(request, f"The detector was not queued: {shortfall}.")
        return redirect(campaign.get_absolute_url())
    return _panel(request, campaign, refused=not queued)

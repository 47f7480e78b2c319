"""Researcher pages of a campaign that show or change its judging.

The dashboard (progress, judges' reliability), the campaign's judging protocol, uploads of
real pairs, the training trial or control items, and excluding a judge. Their URLs keep the
`campaigns-` names of the researcher pages they belong with.
"""

from django.conf import settings
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from campaigns.access import campaign_for, researcher_required
from campaigns.forms import CampaignForm, UploadCorpusForm
from campaigns.importers import CorpusImportError, import_pairs, parse_corpus
from campaigns.task_types import task_type_of

from .controls import add_control_pairs, protocol_of
from .forms import ProtocolForm
from .models import Judge
from .reliability import campaign_reliability
from .stats import campaign_progress
from .training import check_training_rows


@researcher_required
def show_campaign(request, slug):
    campaign = campaign_for(request, slug)
    context = {
        "campaign": campaign,
        "task_type": task_type_of(campaign),
        "progress": campaign_progress(campaign),
        "computed_at": timezone.now(),
        "judge_link": request.build_absolute_uri(campaign.get_judge_url()),
        "training_pairs": campaign.training_pairs,
        "reliability": campaign_reliability(campaign),
    }
    template = "campaigns/_progress.html" if request.htmx else "campaigns/show.html"
    return render(request, template, context)


@researcher_required
def edit_campaign(request, slug):
    campaign = campaign_for(request, slug)
    data = request.POST if request.method == "POST" else None
    form = CampaignForm(data, instance=campaign, may_share=campaign.is_managed_by(request.user), user=request.user)
    protocol_form = ProtocolForm(data, instance=protocol_of(campaign), prefix="protocol")
    if request.method == "POST" and form.is_valid() and protocol_form.is_valid():
        campaign = form.save()
        protocol_form.save()
        messages.success(request, "Campaign saved.")
        return redirect(campaign)
    context = {"form": form, "protocol_form": protocol_form, "campaign": campaign}
    return render(request, "campaigns/form.html", context)


def _import_upload(campaign, data, cleaned, options):
    """Import an uploaded file as the training trial, as control items or as real pairs; returns the message."""
    if cleaned["training"]:
        rows = parse_corpus(data, default_corpus="training", **options)
        count = campaign.replace_training_pairs(check_training_rows(task_type_of(campaign), rows))
        return f"Training trial replaced with {count} pairs."
    if cleaned["controls"]:
        count = add_control_pairs(campaign, parse_corpus(data, default_corpus="control", **options))
        return f"Added {count} control pairs."
    result = import_pairs(campaign, data, corpus=cleaned["corpus"], bleu_range=cleaned["bleu_range"], **options)
    rejected = "".join(f" Rejected {rejection}." for rejection in result.rejected)
    return f"Imported {result.count} pairs from {options['filename']}.{rejected}"


@researcher_required
def upload_corpus(request, slug):
    campaign = campaign_for(request, slug)
    form = UploadCorpusForm(request.POST, request.FILES) if request.method == "POST" else UploadCorpusForm()
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        options = {"format": form.cleaned_data["format"], "filename": upload.name}
        try:
            # One byte past the limit is enough for the importer to refuse the file.
            data = upload.read(settings.PARASOL_IMPORT_MAX_BYTES + 1)
            messages.success(request, _import_upload(campaign, data, form.cleaned_data, options))
            return redirect(campaign)
        except (CorpusImportError, ValueError) as error:
            form.add_error("file", str(error))
    return render(request, "campaigns/upload.html", {"form": form, "campaign": campaign})


@researcher_required
@require_POST
def toggle_judge_exclusion(request, slug, judge_id):
    campaign = campaign_for(request, slug)
    judge = get_object_or_404(Judge, pk=judge_id, campaign=campaign)
    judge.excluded = not judge.excluded
    judge.save(update_fields=["excluded"])
    state = "excluded from" if judge.excluded else "included again in"
    messages.success(request, f"{judge.pseudonym} is {state} results and exports.")
    return redirect(campaign)

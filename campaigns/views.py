"""Researcher pages: campaigns, corpus upload, dashboard, exports."""

from django.conf import settings
from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from annotation.controls import add_control_pairs, protocol_of
from annotation.forms import ProtocolForm
from annotation.models import Judge
from annotation.reliability import campaign_reliability
from annotation.stats import campaign_progress
from scoring.models import Score
from scoring.service import current_signatures, pairs_with_scores_chunks, signature_lines

from .exports import JUDGMENT_COLUMNS, csv_chunks, judgments_frames, write_csv
from .forms import CampaignForm, UploadCorpusForm
from .importers import CorpusImportError, import_pairs, parse_corpus
from .models import Campaign

# Researchers are staff users; anyone else is sent to the researcher login.
researcher_required = staff_member_required(login_url="login")


def campaign_for(request, slug):
    """The campaign if this researcher may see it; anyone else gets a 404, not a hint it exists."""
    return get_object_or_404(Campaign.objects.visible_to(request.user), slug=slug)


@researcher_required
def list_campaigns(request):
    campaigns = Campaign.objects.visible_to(request.user)
    return render(request, "campaigns/list.html", {"campaigns": campaigns})


@researcher_required
def create_campaign(request):
    form = CampaignForm(request.POST if request.method == "POST" else None)
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
def edit_campaign(request, slug):
    campaign = campaign_for(request, slug)
    data = request.POST if request.method == "POST" else None
    form = CampaignForm(data, instance=campaign)
    protocol_form = ProtocolForm(data, instance=protocol_of(campaign), prefix="protocol")
    if request.method == "POST" and form.is_valid() and protocol_form.is_valid():
        campaign = form.save()
        protocol_form.save()
        messages.success(request, "Campaign saved.")
        return redirect(campaign)
    context = {"form": form, "protocol_form": protocol_form, "campaign": campaign}
    return render(request, "campaigns/form.html", context)


@researcher_required
def show_campaign(request, slug):
    campaign = campaign_for(request, slug)
    context = {
        "campaign": campaign,
        "progress": campaign_progress(campaign),
        "computed_at": timezone.now(),
        "judge_link": request.build_absolute_uri(campaign.get_judge_url()),
        "training_pairs": campaign.training_pairs,
        "reliability": campaign_reliability(campaign),
    }
    template = "campaigns/_progress.html" if request.htmx else "campaigns/show.html"
    return render(request, template, context)


def _import_upload(campaign, data, cleaned, options):
    """Import an uploaded file as the training trial, as control items or as real pairs; returns the message."""
    if cleaned["training"]:
        count = campaign.replace_training_pairs(parse_corpus(data, default_corpus="training", **options))
        return f"Training trial replaced with {count} pairs."
    if cleaned["controls"]:
        count = add_control_pairs(campaign, parse_corpus(data, default_corpus="control", **options))
        return f"Added {count} control pairs."
    result = import_pairs(campaign, data, corpus=cleaned["corpus"], **options)
    return f"Imported {result.count} pairs from {options['filename']}."


@researcher_required
def upload_corpus(request, slug):
    campaign = campaign_for(request, slug)
    form = UploadCorpusForm(request.POST, request.FILES) if request.method == "POST" else UploadCorpusForm()
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        options = {"format": form.cleaned_data["format"], "filename": upload.name}
        try:
            # One byte past the limit is enough for the importer to refuse the file.
            data = upload.read(settings.IMPORT_MAX_BYTES + 1)
            messages.success(request, _import_upload(campaign, data, form.cleaned_data, options))
            return redirect(campaign)
        except (CorpusImportError, ValueError) as error:
            form.add_error("file", str(error))
    return render(request, "campaigns/upload.html", {"form": form, "campaign": campaign})


def csv_response(frame, filename):
    """A CSV download of a DataFrame."""
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    write_csv(frame, response)
    return response


def csv_stream_response(frames, columns, filename):
    """A CSV download written chunk by chunk as it is sent: memory stays flat for any number of rows."""
    response = StreamingHttpResponse(csv_chunks(frames, columns), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@researcher_required
def export_pairs(request, slug):
    campaign = campaign_for(request, slug)
    frames, columns, _signatures = pairs_with_scores_chunks(campaign)
    return csv_stream_response(frames, columns, f"{campaign.slug}-pairs.csv")


@researcher_required
def export_signatures(request, slug):
    campaign = campaign_for(request, slug)
    signatures = current_signatures(Score.objects.filter(pair__in=campaign.real_pairs))
    response = HttpResponse(signature_lines(signatures), content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{campaign.slug}-signatures.txt"'
    return response


@researcher_required
def export_judgments(request, slug):
    campaign = campaign_for(request, slug)
    return csv_stream_response(judgments_frames(campaign), JUDGMENT_COLUMNS, f"{campaign.slug}-judgments.csv")


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


@researcher_required
@require_POST
def toggle_open(request, slug):
    campaign = campaign_for(request, slug)
    campaign.is_open = not campaign.is_open
    campaign.save(update_fields=["is_open", "updated_at"])
    messages.success(request, "Campaign opened." if campaign.is_open else "Campaign closed.")
    return redirect(campaign)

"""Researcher pages for LLM generation: runs, their progress, and the campaign's own templates."""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from campaigns.access import campaign_for, researcher_required

from . import llm
from .errors import GenerationError
from .forms import GenerationForm, PromptTemplateForm
from .models import GenerationRun, PromptTemplate
from .selection import select_candidates, stage_progress
from .tasks import resume_run, start_run
from .templates import BUILTIN_TEMPLATES, ChatTemplate, check_template, parse_turns, resolve_template

PREVIEW_SENTENCE = "The little cat refreshes himself with water every morning."
OUTPUTS_SHOWN = 500


def _get_run(campaign, pk):
    return get_object_or_404(GenerationRun, campaign=campaign, pk=pk)


@researcher_required
def list_generations(request, slug):
    campaign = campaign_for(request, slug)
    context = {
        "campaign": campaign,
        "runs": campaign.generation_runs.select_related("created_by"),
        "custom_templates": campaign.prompt_templates.all(),
        "builtin_templates": BUILTIN_TEMPLATES,
    }
    return render(request, "generation/list.html", context)


@researcher_required
def create_generation(request, slug):
    campaign = campaign_for(request, slug)
    post = request.method == "POST"
    form = GenerationForm(request.POST if post else None, request.FILES if post else None, campaign=campaign)
    if post and form.is_valid():
        try:
            run = start_run(
                campaign,
                sources=form.cleaned_data["sources"],
                templates=form.cleaned_data["templates"],
                created_by=request.user,
                **form.run_options(),
            )
        except GenerationError as error:
            form.add_error(None, str(error))
        else:
            messages.success(request, f"Generation queued: {run.sources.count()} sources.")
            return redirect(run)
    return render(request, "generation/form.html", {"form": form, "campaign": campaign})


@researcher_required
def show_generation(request, slug, pk):
    """The run's page; its live part (progress, selection, outputs) alone for the htmx poll."""
    campaign = campaign_for(request, slug)
    run = _get_run(campaign, pk)
    context = {"campaign": campaign, "run": run, **live_context(run)}
    template = "generation/_progress.html" if request.htmx else "generation/show.html"
    return render(request, template, context)


def live_context(run):
    progress, stages = run.progress(), stage_progress(run)
    return {
        "progress": progress,
        "stages": stages,
        "rate_per_minute": 60 * (progress["rate"] or 0),
        "outputs": run.outputs.select_related("source", "pair")[:OUTPUTS_SHOWN],
        "outputs_shown": OUTPUTS_SHOWN,
        # One refresh rule: poll while generating, or while the selection still has candidates to decide.
        "live": run.is_active
        or (run.status == GenerationRun.Status.DONE and run.selects and stages["decided"] < stages["candidates"]),
    }


@researcher_required
@require_POST
def cancel_generation(request, slug, pk):
    run = _get_run(campaign_for(request, slug), pk)
    if run.cancel():
        messages.success(request, "Generation cancelled; what was generated so far is kept.")
    else:
        messages.error(request, f"This run is {run.status}; it can no longer be cancelled.")
    return redirect(run)


@researcher_required
@require_POST
def resume_generation(request, slug, pk):
    run = _get_run(campaign_for(request, slug), pk)
    if run.status == GenerationRun.Status.DONE:
        messages.error(request, "This run is done; there is nothing to resume.")
    else:
        resume_run(run)
        messages.success(request, "Generation queued again for the sources still missing outputs.")
    return redirect(run)


@researcher_required
@require_POST
def select_generation(request, slug, pk):
    """Run the selection stage now (the worker also runs it once the scores are in); says why it waits."""
    run = _get_run(campaign_for(request, slug), pk)
    reason = select_candidates(run)
    if reason:  # the button is shown only when it can run: the state changed since the page was drawn
        messages.error(request, f"The selection cannot run yet: {reason}.")
    else:
        messages.success(request, "Candidates selected; the selected ones and the drawn share go to judges.")
    return redirect(run)


@researcher_required
def edit_template(request, slug, pk=None):
    campaign = campaign_for(request, slug)
    template = get_object_or_404(PromptTemplate, campaign=campaign, pk=pk) if pk else PromptTemplate(campaign=campaign)
    form = PromptTemplateForm(request.POST if request.method == "POST" else None, instance=template)
    if request.method == "POST" and form.is_valid():
        template = form.save(commit=False)
        template.created_by = template.created_by or request.user
        template.save()
        messages.success(request, f"Template “{template.name}” saved.")
        return redirect("generation-list-runs", campaign.slug)
    context = {"form": form, "campaign": campaign, "template": template, "sentence": PREVIEW_SENTENCE}
    return render(request, "generation/template_form.html", context)


@researcher_required
def preview_template(request, slug):
    """The chat for one sentence, as typed (system + turns_text) or by template name, through the chat template."""
    campaign = campaign_for(request, slug)
    data = request.POST if request.method == "POST" else request.GET
    typed = data.get("sentence", "").strip() or next(iter(data.get("sources_text", "").strip().splitlines()), "")
    context = {"campaign": campaign, "sentence": typed.strip() or PREVIEW_SENTENCE}
    context["model"] = data.get("model", "").strip() or GenerationRun._meta.get_field("model").default
    try:
        context["chat"] = _chat_template_of(campaign, data).messages(context["sentence"])
        context["rendered"] = llm.render_chat(llm.chat_tokenizer(context["model"]), context["chat"])
    except GenerationError as error:
        context["error"] = str(error)
    template = "generation/_template_preview.html" if request.htmx else "generation/preview.html"
    return render(request, template, context)


def _chat_template_of(campaign, data):
    if "turns_text" in data:
        system, turns = data.get("system", "").strip(), parse_turns(data["turns_text"])
        check_template(system, turns)
        return ChatTemplate(name=data.get("name", ""), turns=turns, system=system)
    names = data.getlist("templates") or [data.get("template", "naive")]
    return resolve_template(campaign, names[0])

"""Researcher pages for LLM generation: runs, their progress, and the campaign's own templates."""

from django import forms
from django.conf import settings
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from .access import campaign_for, researcher_required
from .generation import (
    BUILTIN_TEMPLATES,
    ChatTemplate,
    GenerationError,
    GenerationRun,
    PromptTemplate,
    chat_tokenizer,
    check_template,
    create_run,
    format_turns,
    parse_sources,
    parse_turns,
    render_chat,
    resolve_template,
    sources_of_campaign,
    template_names,
)

PREVIEW_SENTENCE = "The little cat refreshes himself with water every morning."
SOURCE_CHOICES = [
    ("text", "Typed below, one per line"),
    ("file", "An uploaded file: one per line, or a CSV with a source column"),
    ("campaign", "The distinct sources of this campaign's pairs"),
]


class GenerationForm(forms.ModelForm):
    templates = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, initial=["naive"])
    sources_from = forms.ChoiceField(choices=SOURCE_CHOICES, initial="text", widget=forms.RadioSelect)
    sources_text = forms.CharField(widget=forms.Textarea(attrs={"rows": 6}), required=False, label="Sources")
    sources_file = forms.FileField(required=False)

    class Meta:
        model = GenerationRun
        fields = ["model", "decoding", "temperature", "top_p", "max_new_tokens", "seed", "candidates", "corpus"]

    def __init__(self, *args, campaign, **kwargs):
        super().__init__(*args, **kwargs)
        self.campaign = campaign
        self.fields["templates"].choices = [(name, name) for name in template_names(campaign)]

    def clean(self):
        data = super().clean()
        kind = data.get("sources_from")
        try:
            if kind == "campaign":
                data["sources"] = sources_of_campaign(self.campaign)
            elif kind == "file" and data.get("sources_file"):
                upload = data["sources_file"]
                data["sources"] = parse_sources(upload.read(settings.IMPORT_MAX_BYTES), upload.name)
            else:
                data["sources"] = parse_sources(data.get("sources_text", ""))
        except (GenerationError, UnicodeDecodeError) as error:
            self.add_error(None, f"cannot read the sources: {error}")
        return data

    def run_options(self):
        return {name: self.cleaned_data[name] for name in self.Meta.fields}


class PromptTemplateForm(forms.ModelForm):
    turns_text = forms.CharField(
        label="Turns",
        widget=forms.Textarea(attrs={"rows": 10}),
        help_text="One turn per line starting with 'user:' or 'assistant:'; the last user turn holds {source}.",
    )

    class Meta:
        model = PromptTemplate
        fields = ["name", "system"]
        widgets = {"system": forms.Textarea(attrs={"rows": 3})}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        turns = self.instance.as_chat_template().turns if self.instance.pk else BUILTIN_TEMPLATES["naive"].turns
        self.fields["turns_text"].initial = format_turns(turns)

    def clean_turns_text(self):
        try:
            turns = parse_turns(self.cleaned_data["turns_text"])
        except GenerationError as error:
            raise forms.ValidationError(str(error)) from None
        self.instance.turns = [{"role": role, "content": content} for role, content in turns]
        return self.cleaned_data["turns_text"]

    def _update_errors(self, errors):
        # PromptTemplate.clean() reports on `turns`; the form shows them as `turns_text`.
        if "turns" in getattr(errors, "error_dict", {}):
            errors.error_dict["turns_text"] = errors.error_dict.pop("turns")
        super()._update_errors(errors)


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
    return render(request, "campaigns/generation_list.html", context)


@researcher_required
def create_generation(request, slug):
    campaign = campaign_for(request, slug)
    post = request.method == "POST"
    form = GenerationForm(request.POST if post else None, request.FILES if post else None, campaign=campaign)
    if post and form.is_valid():
        try:
            run = create_run(
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
    return render(request, "campaigns/generation_form.html", {"form": form, "campaign": campaign})


@researcher_required
def show_generation(request, slug, pk):
    campaign = campaign_for(request, slug)
    run = _get_run(campaign, pk)
    context = {"campaign": campaign, "run": run, "progress": run.progress()}
    if request.htmx:
        return render(request, "campaigns/_generation_progress.html", context)
    context["outputs"] = run.outputs.select_related("source", "pair")[:500]
    return render(request, "campaigns/generation_show.html", context)


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
        run.resume()
        messages.success(request, "Generation queued again for the sources still missing outputs.")
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
        return redirect("campaigns-list-generations", campaign.slug)
    context = {"form": form, "campaign": campaign, "template": template, "sentence": PREVIEW_SENTENCE}
    return render(request, "campaigns/generation_template_form.html", context)


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
        context["rendered"] = render_chat(chat_tokenizer(context["model"]), context["chat"])
    except GenerationError as error:
        context["error"] = str(error)
    template = "campaigns/_template_preview.html" if request.htmx else "campaigns/generation_preview.html"
    return render(request, template, context)


def _chat_template_of(campaign, data):
    if "turns_text" in data:
        system, turns = data.get("system", "").strip(), parse_turns(data["turns_text"])
        check_template(system, turns)
        return ChatTemplate(name=data.get("name", ""), turns=turns, system=system)
    names = data.getlist("templates") or [data.get("template", "naive")]
    return resolve_template(campaign, names[0])

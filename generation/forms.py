"""Forms of the generation pages: a run's settings and sources, and a campaign's own template."""

from django import forms
from django.conf import settings

from campaigns.forms import UniqueWithItsOwner
from metrics.registry import metric_names

from . import llm
from .errors import GenerationError
from .models import SELECTION_METRIC, GenerationRun, PromptTemplate, parse_sources, sources_of_campaign
from .templates import BUILTIN_TEMPLATES, format_turns, parse_turns, template_names

SOURCE_CHOICES = [
    ("text", "Typed below, one per line"),
    ("file", "An uploaded file: one per line, or a CSV with a source column"),
    ("campaign", "The distinct sources of this campaign's pairs"),
]


class GenerationForm(UniqueWithItsOwner):
    templates = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, initial=["naive"])
    sources_from = forms.ChoiceField(choices=SOURCE_CHOICES, initial="text", widget=forms.RadioSelect)
    sources_text = forms.CharField(widget=forms.Textarea(attrs={"rows": 6}), required=False, label="Sources")
    sources_file = forms.FileField(required=False)
    selection = forms.ChoiceField(
        choices=[
            ("", "Default: the top candidate when there are several, else keep all"),
            *GenerationRun.Selection.choices,
        ],
        required=False,
        help_text="Which candidates go to judges, by the selection metric's scores (computed by the scoring workers).",
    )

    class Meta:
        model = GenerationRun
        fields = [
            "model",
            "decoding",
            "temperature",
            "top_p",
            "max_new_tokens",
            "seed",
            "candidates",
            "corpus",
            "bleu_low",
            "bleu_high",
            "pattern_filter",
            "selection_metric",
            "selection_threshold",
            "selection_max_bleu",
            "unselected_share",
        ]

    def __init__(self, *args, campaign, **kwargs):
        super().__init__(*args, **kwargs)
        self.campaign = campaign
        self.fields["templates"].choices = [(name, name) for name in template_names(campaign)]
        self.fields["model"].help_text = f"One of: {', '.join(llm.model_names())} (GENERATION_MODELS adds more)."
        # Every registered metric, from the registry: none is ever missing from the list.
        self.fields["selection_metric"] = forms.ChoiceField(
            choices=[("", f"Default: {SELECTION_METRIC}"), *((name, name) for name in metric_names())],
            required=False,
            help_text=GenerationRun._meta.get_field("selection_metric").help_text,
        )
        self.fields["unselected_share"].required = False  # left empty: the run's default

    def clean_model(self):
        try:
            llm.model_location(self.cleaned_data["model"])  # a name, never a path on the server
        except GenerationError as error:
            raise forms.ValidationError(str(error)) from None
        return self.cleaned_data["model"]

    def clean(self):
        data = super().clean()
        kind = data.get("sources_from")
        try:
            if kind == "campaign":
                data["sources"] = sources_of_campaign(self.campaign)
            elif kind == "file" and data.get("sources_file"):
                upload = data["sources_file"]
                data["sources"] = parse_sources(upload.read(settings.PARASOL_IMPORT_MAX_BYTES), upload.name)
            else:
                data["sources"] = parse_sources(data.get("sources_text", ""))
        except (GenerationError, UnicodeDecodeError) as error:
            self.add_error(None, f"cannot read the sources: {error}")
        return data

    def run_options(self):
        """The run's settings; an empty one is left to `create_run`'s defaults (a template's filters, the rule)."""
        names = [*self.Meta.fields, "selection"]
        return {name: self.cleaned_data[name] for name in names if self.cleaned_data[name] not in (None, "")}


class PromptTemplateForm(UniqueWithItsOwner):
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

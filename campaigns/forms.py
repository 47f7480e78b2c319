from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils.html import conditional_escape
from django.utils.text import slugify

from metrics.filters import bleu_range_problem
from metrics.registry import METRICS

from . import task_types
from .importers import FORMATS
from .models import SLUG_NOT_AVAILABLE, Campaign, refuse_reserved_slug, slug_change_problem

FORMAT_TITLES = {
    "auto": "Detect from the file",
    "jsonl": "JSON lines",
    "mrpc": "MRPC (native tab-separated file)",
    "paws": "PAWS (id, sentence1, sentence2, label)",
}
# Every format the importers read (their registry), so none is ever missing from the form.
FORMAT_CHOICES = [(name, FORMAT_TITLES.get(name, name.upper())) for name in FORMATS]


class UniqueWithItsOwner(forms.ModelForm):
    """A ModelForm whose model is unique together with a field the view sets rather than the form (a template's
    name per campaign): Django leaves such a constraint unchecked, and the save would meet an IntegrityError.
    The fields of the model's unique constraints that the instance already holds are validated with the form,
    so a clash is a form error. Every ModelForm of the project derives from it
    (tests/campaigns/test_unique_with_owner.py)."""

    def _get_validation_exclusions(self):
        excluded = super()._get_validation_exclusions()
        meta = self.instance._meta
        constrained = {name for fields in meta.unique_together for name in fields}
        constrained |= {name for constraint in meta.total_unique_constraints for name in constraint.fields}
        constrained |= {field.name for field in meta.concrete_fields if field.unique and not field.primary_key}
        held = {name for name in constrained if getattr(self.instance, meta.get_field(name).attname, None) is not None}
        return excluded - held


class PlainHelpText:
    """Help texts shown as the text they are: Django's form templates print them as HTML, and Parasol's name
    placeholders in angle brackets ("/j/<slug>/", "<campaign id>/<version>") that HTML would swallow.

    Escaped when the form is drawn, so help texts set in `__init__` are covered; escaping twice is a no-op.
    """

    def get_context(self):
        for field in self.fields.values():
            field.help_text = conditional_escape(field.help_text)
        return super().get_context()


class CampaignChoices:
    """A campaign's detector and LLM backends, checked alike by the researchers' form and the admin's
    (the form sets `self.user`, whose visible campaigns bound the detector choice)."""

    def clean_paratag_detector(self):
        value = self.cleaned_data.get("paratag_detector", "").strip()
        problem = self.instance.detector_choice_problem(value, self.user)
        if problem:
            raise forms.ValidationError(problem)
        return value

    def clean_llm_backends(self):
        # Left empty: every LLM metric uses the deployment's default backend.
        return self.cleaned_data.get("llm_backends") or {}


class CampaignForm(PlainHelpText, CampaignChoices, UniqueWithItsOwner):
    class Meta:
        model = Campaign
        fields = [
            "name",
            "slug",
            "description",
            "task_type",
            "pairs_per_judge",
            "overlap_target",
            "adaptive_overlap",
            "overlap_max",
            "ppi_predictor",
            "active_choice",
            "active_budget",
            "is_open",
            "system_keys",
            "span_highlight",
            "paratag_detector",
            "llm_backends",
            "shared_with",
        ]
        widgets = {"shared_with": forms.CheckboxSelectMultiple}
        error_messages = {"slug": {"unique": SLUG_NOT_AVAILABLE}}

    def __init__(self, *args, may_share=True, owner=None, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.may_manage = may_share  # the owner or a superuser: shares, renames
        self.user = user or owner  # whose campaigns a named detector may come from
        self.fields["slug"].validators.append(refuse_reserved_slug)
        if self.instance.pk:
            link = self.instance.get_judge_url()
            self.fields["slug"].help_text = f"Letters, digits and hyphens; judges open the link {link}."
        else:
            # Proposed from the name (static/js/campaign_form.js, or here when left empty).
            self.fields["slug"].required = False
            self.fields["slug"].help_text = (
                "Letters, digits and hyphens, proposed from the name; judges will open the link /j/ followed by "
                "the slug and a slash (for “Spring study”: /j/spring-study/)."
            )
        # Only read with adaptive overlap: a form (or script) that leaves it out keeps the default.
        self.fields["overlap_max"].required = False
        self.fields["task_type"] = forms.ChoiceField(
            choices=task_types.choices,
            initial=self.instance.task_type,
            required=False,  # left out: the campaign keeps its type (similarity for a new one)
            help_text="What judges are asked about each pair; fixed once a judge has started.",
        )
        if self.instance.pk and self.instance.has_started():
            self.fields["task_type"].disabled = True
            # The design a campaign's judged pairs were drawn under cannot change after the fact.
            self.fields["active_choice"].disabled = True
            self.fields["active_budget"].disabled = True
        self.fields["ppi_predictor"] = forms.ChoiceField(
            choices=[("", "The best on the judged pairs (cross-fitted)")]
            + [(name, entry.title) for name, entry in METRICS.items()],
            initial=self.instance.ppi_predictor,
            required=False,
            label="Predictor metric",
            help_text=Campaign._meta.get_field("ppi_predictor").help_text,
        )
        self.fields["llm_backends"].help_text = (
            f'Where each LLM metric asks its model, as JSON, e.g. {{"parapluie_fs_direct": "in-process"}}. '
            f"Backends of this deployment: {', '.join(settings.PARASOL_LLM_BACKENDS)}; "
            f"a metric left out uses {settings.PARASOL_LLM_BACKEND}."
        )
        if not may_share:
            # Only the owner (or a superuser) decides who else sees the campaign.
            del self.fields["shared_with"]
            return
        owner = owner or self.instance.created_by
        # Colleagues only: active researchers (staff), not superusers (who see everything
        # anyway) and not the owner; anyone already on the list stays listed.
        colleagues = get_user_model().objects.filter(is_active=True, is_staff=True, is_superuser=False)
        if owner is not None:
            colleagues = colleagues.exclude(pk=owner.pk)
        if self.instance.pk:
            colleagues = colleagues | self.instance.shared_with.all()
        self.fields["shared_with"].queryset = colleagues.distinct().order_by("username")

    def clean_slug(self):
        slug = self.cleaned_data.get("slug")
        if not slug:
            slug = slugify(self.cleaned_data.get("name") or "")[: Campaign._meta.get_field("slug").max_length]
            slug = slug.strip("-")
            if not slug:
                raise forms.ValidationError("Give a slug: the name has no letters or digits to make one from.")
            refuse_reserved_slug(slug)
        problem = slug_change_problem(self.instance, slug, self.may_manage)
        if problem:
            raise forms.ValidationError(problem)
        return slug

    def clean_overlap_max(self):
        value = self.cleaned_data.get("overlap_max")
        return Campaign._meta.get_field("overlap_max").default if value is None else value

    def clean_task_type(self):
        task_type = self.cleaned_data["task_type"] or self.instance.task_type
        problem = self.instance.task_type_problem(task_type)
        if problem:
            raise forms.ValidationError(problem[0].upper() + problem[1:] + ".")
        return task_type


class UploadCorpusForm(PlainHelpText, forms.Form):
    file = forms.FileField(
        help_text="CSV, TSV or JSON lines with source and hypothesis columns, or an MRPC / PAWS file."
    )
    format = forms.ChoiceField(choices=FORMAT_CHOICES, initial="auto")
    corpus = forms.CharField(required=False, max_length=100, help_text="Corpus name for rows that do not give one.")
    training = forms.BooleanField(
        required=False,
        help_text="Use these pairs (the first 5) as the campaign's training trial instead of real pairs.",
    )
    controls = forms.BooleanField(
        required=False,
        help_text="Add these pairs as hidden control items; each row's label is the expected answer "
        "(1 = paraphrase). They replace the controls Parasol would build itself.",
    )

    bleu_low = forms.FloatField(
        required=False,
        min_value=0,
        max_value=100,
        label="BLEU above",
        help_text="ParaTag's filter: import only pairs whose BLEU (0–100) lies strictly between these (e.g. 5 and 20).",
    )
    bleu_high = forms.FloatField(required=False, min_value=0, max_value=100, label="BLEU below")

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("training") and cleaned.get("controls"):
            raise forms.ValidationError("A file is either the training trial or control items, not both.")
        low, high = cleaned.get("bleu_low"), cleaned.get("bleu_high")
        if (low is None) != (high is None):
            raise forms.ValidationError("Give both ends of the BLEU range, or neither.")
        problem = bleu_range_problem(low, high) if low is not None else None
        if problem:
            raise forms.ValidationError(problem[0].upper() + problem[1:] + ".")
        cleaned["bleu_range"] = (low, high) if low is not None else None
        return cleaned

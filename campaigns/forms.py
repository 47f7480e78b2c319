from django import forms
from django.contrib.auth import get_user_model

from . import tasknames
from .models import Campaign

FORMAT_CHOICES = [
    ("auto", "Detect from the file"),
    ("csv", "CSV"),
    ("tsv", "TSV"),
    ("jsonl", "JSON lines"),
    ("mrpc", "MRPC (native tab-separated file)"),
    ("paws", "PAWS (id, sentence1, sentence2, label)"),
]


class CampaignForm(forms.ModelForm):
    task_type = forms.ChoiceField(
        choices=tasknames.choices,
        initial="similarity",
        required=False,
        help_text="What judges answer about each pair; fixed once the campaign exists.",
    )

    def clean_task_type(self):
        return self.cleaned_data["task_type"] or "similarity"

    class Meta:
        model = Campaign
        fields = [
            "name",
            "slug",
            "description",
            "task_type",
            "span_highlight",
            "pairs_per_judge",
            "overlap_target",
            "is_open",
            "shared_with",
        ]
        help_texts = {"slug": "Letters, digits and hyphens; judges use the link /j/<slug>/."}
        widgets = {"shared_with": forms.CheckboxSelectMultiple}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Only researchers (staff) can be given access.
        self.fields["shared_with"].queryset = get_user_model().objects.filter(is_staff=True).order_by("username")
        if self.instance.pk is not None:
            # Judgments already given are answers to this task type: it cannot change under them.
            self.fields["task_type"].disabled = True


class UploadCorpusForm(forms.Form):
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
        if low is not None and low >= high:
            raise forms.ValidationError("The BLEU range needs its lower end below its upper end.")
        cleaned["bleu_range"] = (low, high) if low is not None else None
        return cleaned

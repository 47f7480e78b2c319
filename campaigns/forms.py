from django import forms
from django.contrib.auth import get_user_model

from .models import TASK_TYPE_CHOICES, Campaign

FORMAT_CHOICES = [
    ("auto", "Detect from the file"),
    ("csv", "CSV"),
    ("tsv", "TSV"),
    ("jsonl", "JSON lines"),
    ("mrpc", "MRPC (native tab-separated file)"),
    ("paws", "PAWS (id, sentence1, sentence2, label)"),
]


class CampaignForm(forms.ModelForm):
    class Meta:
        model = Campaign
        fields = [
            "name",
            "slug",
            "description",
            "task_type",
            "pairs_per_judge",
            "overlap_target",
            "is_open",
            "system_keys",
            "shared_with",
        ]
        help_texts = {"slug": "Letters, digits and hyphens; judges use the link /j/<slug>/."}
        widgets = {"shared_with": forms.CheckboxSelectMultiple}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Only researchers (staff) can be given access.
        self.fields["shared_with"].queryset = get_user_model().objects.filter(is_staff=True).order_by("username")
        self.fields["task_type"] = forms.ChoiceField(
            choices=TASK_TYPE_CHOICES,
            initial=self.instance.task_type,
            required=False,  # left out: the campaign keeps its type (similarity for a new one)
            help_text="What judges are asked about each pair; fixed once a judge has started.",
        )
        if self.instance.pk and self.instance.has_started():
            self.fields["task_type"].disabled = True

    def clean_task_type(self):
        task_type = self.cleaned_data["task_type"] or self.instance.task_type
        problem = self.instance.task_type_problem(task_type)
        if problem:
            raise forms.ValidationError(problem[0].upper() + problem[1:] + ".")
        return task_type


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

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("training") and cleaned.get("controls"):
            raise forms.ValidationError("A file is either the training trial or control items, not both.")
        return cleaned

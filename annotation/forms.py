from django import forms
from django.utils.translation import gettext_lazy as _

from campaigns.forms import PlainHelpText, UniqueWithItsOwner

from .models import CampaignProtocol, EnglishLevel, Judge


class EnglishLevelForm(UniqueWithItsOwner):
    english_level = forms.ChoiceField(
        choices=EnglishLevel.choices,
        widget=forms.RadioSelect,
        label=_("How would you rate your English?"),
        error_messages={"required": _("Please choose your English level to continue.")},
    )

    class Meta:
        model = Judge
        fields = ["english_level"]


class ProtocolForm(PlainHelpText, UniqueWithItsOwner):
    completion_url = forms.URLField(
        required=False, assume_scheme="https", help_text="Where judges are sent at the end (e.g. Prolific)."
    )

    class Meta:
        model = CampaignProtocol
        fields = ["control_share", "max_judges", "consent_text", "completion_code", "completion_url", "questionnaire"]
        widgets = {
            "consent_text": forms.Textarea(attrs={"rows": 3}),
            "questionnaire": forms.Textarea(attrs={"rows": 3}),
        }

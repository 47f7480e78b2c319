"""REST API reading a campaign's judgments and the exports that join them with scores (staff only)."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from annotation.models import Answer, Judgment
from annotation.tasktypes.similarity.scale import ANSWER_KEY
from campaigns.access import csv_stream_response
from campaigns.models import Campaign
from parasol.api_fields import single_query_value
from reports.exports import JUDGMENT_COLUMNS, jsonl_response, judgments_frames, pairs_with_scores_pages, tagging_lines

# Each export as (frames a page at a time, columns): streamed like the download buttons.
EXPORTS = {
    "pairs": lambda campaign: pairs_with_scores_pages(campaign)[:2],
    "judgments": lambda campaign: (judgments_frames(campaign), JUDGMENT_COLUMNS),
}


class FiveWayAnswerField(serializers.ChoiceField):
    """A judgment's 5-way answer (`Judgment.values["answer"]`), published under the API's first name, `label`;
    blank for a task type that answers otherwise."""

    def __init__(self, **kwargs):
        super().__init__(choices=Answer.choices, allow_blank=True, source="values", read_only=True, **kwargs)

    def to_representation(self, values):
        answer = values.get(ANSWER_KEY, "") if isinstance(values, dict) else ""
        return answer if answer in Answer.values else ""


class JudgmentSerializer(serializers.ModelSerializer):
    judge = serializers.CharField(source="judge.pseudonym")
    english_level = serializers.CharField(source="judge.english_level")
    pair_id = serializers.CharField(source="pair.external_id")
    top_sentence = serializers.CharField(source="assignment.top")
    label = FiveWayAnswerField(help_text="The 5-way answer; blank for a task type that answers otherwise.")

    class Meta:
        model = Judgment
        fields = [
            "judge",
            "english_level",
            "pair_id",
            "label",
            "is_training",
            "top_sentence",
            "response_ms",
            "created_at",
        ]


# `/api/campaigns/<slug>/judgments/` and `.../export/`, beside the campaign routes of `campaigns.api`
# (a comment, not a docstring: drf-spectacular would publish it as the operations' description).
class CampaignReadViewSet(viewsets.GenericViewSet):
    lookup_field = "slug"

    def get_queryset(self):
        return Campaign.objects.visible_to(self.request.user)

    @extend_schema(responses=JudgmentSerializer(many=True))
    @action(detail=True, methods=["get"], serializer_class=JudgmentSerializer)
    def judgments(self, request, slug=None):
        campaign = self.get_object()
        queryset = (
            Judgment.objects.filter(pair__campaign=campaign)
            .select_related("judge", "pair", "assignment")
            .order_by("pk")
        )
        page = self.paginate_queryset(queryset)
        return self.get_paginated_response(JudgmentSerializer(page, many=True).data)

    @extend_schema(
        parameters=[OpenApiParameter("kind", str, enum=[*EXPORTS, "taggings"], default="pairs")],
        # One content type per kind: CSV for pairs and judgments, JSON lines (one tagging per line) for taggings.
        responses={
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="kind=pairs or kind=judgments"),
            (200, "application/jsonl"): OpenApiResponse(OpenApiTypes.STR, description="kind=taggings"),
        },
    )
    @action(detail=True, methods=["get"])
    def export(self, request, slug=None):
        campaign = self.get_object()
        kind = single_query_value(request, "kind", "pairs")
        if kind == "taggings":
            return jsonl_response(tagging_lines(campaign), f"{campaign.slug}-taggings.jsonl")
        if kind not in EXPORTS:
            return Response(
                {"detail": "kind must be 'pairs', 'judgments' or 'taggings'."}, status=status.HTTP_400_BAD_REQUEST
            )
        frames, columns = EXPORTS[kind](campaign)
        return csv_stream_response(frames, columns, f"{campaign.slug}-{kind}.csv")

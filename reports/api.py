"""REST API for the exports that join judgments with scores (token or session auth, staff only)."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from campaigns.access import csv_response
from campaigns.models import Campaign
from reports.exports import judgments_frame, pairs_with_scores

EXPORTS = {"pairs": lambda campaign: pairs_with_scores(campaign)[0], "judgments": judgments_frame}


class CampaignExportViewSet(viewsets.GenericViewSet):
    """`/api/campaigns/<slug>/export/`, beside the campaign routes of `campaigns.api`."""

    lookup_field = "slug"

    def get_queryset(self):
        return Campaign.objects.visible_to(self.request.user)

    @extend_schema(
        parameters=[OpenApiParameter("kind", str, enum=list(EXPORTS), default="pairs")],
        responses={(200, "text/csv"): OpenApiTypes.STR},
    )
    @action(detail=True, methods=["get"])
    def export(self, request, slug=None):
        campaign = self.get_object()
        kind = request.query_params.get("kind", "pairs")
        if kind not in EXPORTS:
            return Response({"detail": "kind must be 'pairs' or 'judgments'."}, status=status.HTTP_400_BAD_REQUEST)
        return csv_response(EXPORTS[kind](campaign), f"{campaign.slug}-{kind}.csv")

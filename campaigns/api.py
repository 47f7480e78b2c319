"""REST API for researchers (token or session auth, staff only)."""

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response
from rest_framework.validators import UniqueValidator

from parasol.parsers import JSONParser

from .importers import CorpusImportError, import_rows
from .models import SLUG_NOT_AVAILABLE, Campaign, Pair, refuse_reserved_slug, slug_change_problem


class CampaignSerializer(serializers.ModelSerializer):
    judge_url = serializers.CharField(source="get_judge_url", read_only=True)
    task_type = serializers.CharField(required=False, default="similarity")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for validator in self.fields["slug"].validators:
            if isinstance(validator, UniqueValidator):
                validator.message = SLUG_NOT_AVAILABLE  # in use, live or in anyone's trash: nothing more

    def validate_slug(self, value):
        try:
            refuse_reserved_slug(value)
        except DjangoValidationError as error:
            raise serializers.ValidationError(error.messages) from None
        if self.instance is not None:
            request = self.context.get("request")
            may_manage = request is not None and self.instance.is_managed_by(request.user)
            problem = slug_change_problem(self.instance, value, may_manage)
            if problem:
                raise PermissionDenied(problem)
        return value

    class Meta:
        model = Campaign
        fields = [
            "slug",
            "name",
            "description",
            "pairs_per_judge",
            "overlap_target",
            "adaptive_overlap",
            "overlap_max",
            "is_open",
            "task_type",
            "system_keys",
            "span_highlight",
            "paratag_detector",
            "llm_backends",
            "judge_url",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["created_at", "updated_at"]

    def validate(self, data):
        """The model's own rules (adaptive overlap's maximum), which DRF does not run by itself."""
        campaign = Campaign(**{**self._current(), **data})
        try:
            campaign.clean()
        except DjangoValidationError as error:
            raise serializers.ValidationError(error.message_dict) from None
        return data

    def _current(self):
        fields = ("overlap_target", "adaptive_overlap", "overlap_max")
        return {name: getattr(self.instance, name) for name in fields} if self.instance else {}

    def validate_paratag_detector(self, value):
        request = self.context.get("request")
        problem = (self.instance or Campaign()).detector_choice_problem(value, getattr(request, "user", None))
        if problem:
            raise serializers.ValidationError(problem)
        return value

    def validate_task_type(self, value):
        problem = (self.instance or Campaign()).task_type_problem(value)
        if problem:
            raise serializers.ValidationError(problem)
        return value


class PairSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="external_id", required=False)

    class Meta:
        model = Pair
        fields = [
            "id",
            "corpus",
            "source",
            "hypothesis",
            "gold_label",
            "metadata",
            "is_training",
            "tokens",
            "gold_tags",
        ]
        read_only_fields = ["is_training", "tokens", "gold_tags"]


class PairInputSerializer(serializers.Serializer):
    id = serializers.CharField(required=False, allow_blank=True)
    corpus = serializers.CharField(required=False, allow_blank=True)
    source = serializers.CharField()
    hypothesis = serializers.CharField()
    label = serializers.CharField(required=False, allow_blank=True, allow_null=True)
    metadata = serializers.DictField(required=False)


class CampaignViewSet(viewsets.ModelViewSet):
    serializer_class = CampaignSerializer
    lookup_field = "slug"

    def get_queryset(self):
        return Campaign.objects.visible_to(self.request.user)

    def perform_create(self, serializer):
        campaign = serializer.save(created_by=self.request.user)
        campaign.ensure_training_pairs()

    def perform_destroy(self, instance):
        """Only the owner (or a superuser) deletes, and into the trash: restorable, nothing lost."""
        if not instance.is_managed_by(self.request.user):
            raise PermissionDenied("Only the campaign's owner can delete it.")
        instance.move_to_trash()

    @extend_schema(
        methods=["POST"],
        request=PairInputSerializer(many=True),
        responses={201: OpenApiTypes.OBJECT},
        description="Bulk create: a list of pairs, all accepted or none.",
    )
    @extend_schema(methods=["GET"], responses=PairSerializer(many=True))
    # Pairs come as JSON only: a form body could carry file parts where text is expected.
    @action(detail=True, methods=["get", "post"], serializer_class=PairSerializer, parser_classes=[JSONParser])
    def pairs(self, request, slug=None):
        campaign = self.get_object()
        if request.method == "GET":
            page = self.paginate_queryset(campaign.pairs.order_by("pk"))
            return self.get_paginated_response(PairSerializer(page, many=True).data)
        rows = request.data if isinstance(request.data, list) else [request.data]
        try:
            result = import_rows(campaign, rows)
        except CorpusImportError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        return Response({"created": result.count}, status=status.HTTP_201_CREATED)

"""REST API for researchers (token or session auth, staff only).

The serializers are the contract: each rule the server enforces is a field's type, choice,
length or bound, which drf-spectacular publishes in `/api/schema/` (parasol.api_fields).
"""

import json

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import RegexValidator
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.validators import UniqueValidator

from metrics.registry import METRICS, llm_backend_metrics
from parasol.api_fields import (
    FlatMetadataField,
    RefusesUnknownFields,
    StrictCharField,
    StrictChoiceField,
    StrictModelSerializer,
    conflict,
    sentence_field,
)

from .importers import CorpusConflictError, CorpusImportError, import_rows
from .importers.validation import CORPUS_MAX_LENGTH, GOLD_LABEL_OF_TEXT, ID_MAX_LENGTH
from .models import (
    DETECTOR_CHOICE_FORMAT,
    DETECTOR_CHOICE_PATTERN,
    SLUG_NOT_AVAILABLE,
    Campaign,
    Pair,
    llm_backends_problem,
    refuse_reserved_slug,
    slug_change_problem,
)
from .task_types import default_task_type, task_type_names


@extend_schema_field(
    {
        "type": "object",
        "propertyNames": {"enum": llm_backend_metrics()},
        "additionalProperties": {"type": "string", "enum": list(settings.PARASOL_LLM_BACKENDS)},
    }
)
class LlmBackendsField(serializers.DictField):
    """A campaign's LLM backend per LLM metric: names the schema lists (metrics, this deployment's backends)."""

    def to_internal_value(self, data):
        data = super().to_internal_value(data)
        problem = llm_backends_problem(data)
        if problem:
            raise ValidationError(problem)
        return data


class CampaignSerializer(StrictModelSerializer):
    judge_url = serializers.CharField(source="get_judge_url", read_only=True)

    def get_fields(self):
        fields = super().get_fields()
        # The registered task types as they are when asked (a test's toy among them), not at import.
        fields["task_type"] = StrictChoiceField(
            choices=task_type_names(),
            required=False,
            default=default_task_type,
            help_text=Campaign._meta.get_field("task_type").help_text,
        )
        fields["ppi_predictor"] = StrictChoiceField(
            choices=["", *METRICS],
            required=False,
            allow_blank=True,
            help_text=Campaign._meta.get_field("ppi_predictor").help_text,
        )
        fields["llm_backends"] = LlmBackendsField(
            required=False, help_text=Campaign._meta.get_field("llm_backends").help_text
        )
        fields["paratag_detector"] = StrictCharField(
            required=False,
            allow_blank=True,
            max_length=Campaign._meta.get_field("paratag_detector").max_length,
            validators=[RegexValidator(DETECTOR_CHOICE_PATTERN, DETECTOR_CHOICE_FORMAT)],
            help_text=Campaign._meta.get_field("paratag_detector").help_text,
        )
        # Uniqueness is checked in validate_slug: a slug in use is a conflict (409), not a malformed body.
        fields["slug"].validators = [v for v in fields["slug"].validators if not isinstance(v, UniqueValidator)]
        return fields

    def validate_slug(self, value):
        try:
            refuse_reserved_slug(value)
        except DjangoValidationError as error:
            raise conflict("slug", error.messages[0]) from None
        if self.instance is not None:
            request = self.context.get("request")
            may_manage = request is not None and self.instance.is_managed_by(request.user)
            problem = slug_change_problem(self.instance, value, may_manage)
            if problem:
                raise PermissionDenied(problem)
        taken = Campaign.objects.filter(slug=value)
        if self.instance is not None:
            taken = taken.exclude(pk=self.instance.pk)
        if taken.exists():  # in use, live or in anyone's trash: nothing more
            raise conflict("slug", SLUG_NOT_AVAILABLE)
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
            "ppi_predictor",
            "active_choice",
            "active_budget",
            "llm_backends",
            "judge_url",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["created_at", "updated_at"]

    def validate(self, data):
        """The model's own rules (adaptive overlap's maximum), which DRF does not run by itself.

        They relate two values (or a value and the stored campaign), which no schema can state: 409.
        """
        campaign = Campaign(**{**self._current(), **data})
        try:
            campaign.clean()
        except DjangoValidationError as error:
            field, messages = next(iter(error.message_dict.items()))
            raise conflict(field, messages[0]) from None
        return data

    def _current(self):
        fields = (
            "overlap_target",
            "adaptive_overlap",
            "overlap_max",
            "ppi_predictor",
            "active_choice",
            "active_budget",
        )
        return {name: getattr(self.instance, name) for name in fields} if self.instance else {}

    def validate_active_choice(self, value):
        return self._design_kept("active_choice", value)

    def validate_active_budget(self, value):
        return self._design_kept("active_budget", value)

    def _design_kept(self, field, value):
        """The design a campaign's judged pairs were drawn under cannot change once judges have started."""
        if self.instance is not None and self.instance.has_started() and value != getattr(self.instance, field):
            raise conflict(field, "Judges have started: the campaign's choice of pairs can no longer change.")
        return value

    def validate_paratag_detector(self, value):
        """The form is the schema's pattern; whether that campaign and version exist for this user is a 409."""
        request = self.context.get("request")
        problem = (self.instance or Campaign()).detector_choice_problem(value, getattr(request, "user", None))
        if problem:
            raise conflict("paratag_detector", problem)
        return value

    def validate_task_type(self, value):
        problem = (self.instance or Campaign()).task_type_problem(value)
        if problem:  # a known name (the choices say so): judges have started
            raise conflict("task_type", problem)
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
            "tokenisation",
            "gold_tags",
        ]
        read_only_fields = ["is_training", "tokens", "tokenisation", "gold_tags"]


class PairInputSerializer(RefusesUnknownFields, serializers.Serializer):
    """One pair to import (no other field). White space around text is trimmed, as in a file import."""

    id = StrictCharField(
        required=False, allow_blank=True, max_length=ID_MAX_LENGTH, help_text="A string; empty: one is given."
    )
    corpus = StrictCharField(required=False, allow_blank=True, max_length=CORPUS_MAX_LENGTH)
    source = sentence_field()
    hypothesis = sentence_field()
    label = StrictChoiceField(
        choices=list(GOLD_LABEL_OF_TEXT),
        required=False,
        allow_blank=True,
        allow_null=True,
        help_text="The gold label: 1/yes/true/paraphrase or 0/no/false/non-paraphrase; empty or null: none.",
    )
    metadata = FlatMetadataField(required=False, help_text="Flat: each value a string, a number, a boolean or null.")


def checked_pairs(data):
    """The body's pairs as the importer's rows, or a 400 naming the first bad row and field as an import does."""
    if not isinstance(data, list):
        raise ValidationError({"detail": "The body must be a JSON list of pairs (one pair: a list of one)."})
    rows = PairInputSerializer(data=data, many=True, allow_empty=False)
    if rows.is_valid():
        return [{key: value for key, value in row.items() if value is not None} for row in rows.validated_data]
    path, message = first_error(rows.errors)
    names = [str(key) if str(key).isidentifier() else json.dumps(key) for key in path[1:]]  # "\r" shown as such
    where = f"row {path[0] + 1}: {': '.join(names)}: " if path and isinstance(path[0], int) else ""
    raise ValidationError({"detail": f"{where}{message}"})


def first_error(errors, path=()):
    """The first message in DRF's nested errors (dicts by field or row index, lists of messages), and where."""
    if isinstance(errors, dict):
        key, value = next(iter(errors.items()))
        return first_error(value, path if key == "non_field_errors" else (*path, key))
    return path, str(errors[0]) if isinstance(errors, list) else str(errors)


class CreatedSerializer(serializers.Serializer):
    created = serializers.IntegerField(min_value=1)


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
        request=PairInputSerializer(many=True, allow_empty=False, max_length=settings.PARASOL_IMPORT_MAX_ROWS),
        responses={201: OpenApiResponse(CreatedSerializer, description="How many pairs were imported.")},
        description="Bulk create: a list of pairs, all accepted or none. An id used twice, or already "
        "in the campaign, and metadata keys past the campaign's limit are conflicts (409).",
    )
    @extend_schema(methods=["GET"], responses=PairSerializer(many=True))
    @action(detail=True, methods=["get", "post"], serializer_class=PairSerializer)
    def pairs(self, request, slug=None):
        campaign = self.get_object()
        if request.method == "GET":
            page = self.paginate_queryset(campaign.pairs.order_by("pk"))
            return self.get_paginated_response(PairSerializer(page, many=True).data)
        rows = checked_pairs(request.data)
        try:
            result = import_rows(campaign, rows)
        except CorpusConflictError as error:
            return Response({"detail": str(error)}, status=status.HTTP_409_CONFLICT)
        except CorpusImportError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        return Response({"created": result.count}, status=status.HTTP_201_CREATED)

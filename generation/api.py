"""REST API for generation runs: create one, follow its progress, cancel or resume it, read its outputs."""

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from campaigns.models import Campaign
from metrics.registry import metric_names
from parasol.api_fields import (
    NO_NUL_PATTERN,
    Conflict,
    StrictBooleanField,
    StrictCharField,
    StrictChoiceField,
    StrictModelSerializer,
    StrictSlugField,
    sentence_field,
    single_query_value,
)
from parasol.schema import DETAIL

from .errors import GenerationError
from .llm import model_names
from .models import GenerationOutput, GenerationRun, PromptTemplate, sources_of_campaign
from .selection import stage_progress
from .tasks import resume_run, start_run
from .templates import BUILTIN_TEMPLATES


class GenerationRunSerializer(StrictModelSerializer):
    """A run. Rules between values (greedy decoding with more than one candidate, a BLEU range's
    low < high) and references to stored data (the campaign's templates and sources) answer 409."""

    campaign = StrictSlugField(max_length=Campaign._meta.get_field("slug").max_length, help_text="The campaign's slug.")
    templates = serializers.ListField(
        child=StrictCharField(max_length=PromptTemplate._meta.get_field("name").max_length),
        min_length=1,
        help_text=f"Template names, in order: built-in ones ({', '.join(BUILTIN_TEMPLATES)}) or the campaign's own.",
    )
    sources = serializers.ListField(
        child=sentence_field(),
        required=False,
        min_length=1,
        max_length=settings.PARASOL_IMPORT_MAX_ROWS,
        write_only=True,
        help_text="Sentences to paraphrase.",
    )
    sources_from_campaign = StrictBooleanField(
        default=False, write_only=True, help_text="Use the distinct sources of the campaign's pairs instead."
    )
    progress = serializers.SerializerMethodField()
    stages = serializers.SerializerMethodField(help_text="Generated, scored, selected, sent to judges; why it waits.")

    class Meta:
        model = GenerationRun
        fields = [
            "id",
            "campaign",
            "templates",
            "model",
            "decoding",
            "temperature",
            "top_p",
            "max_new_tokens",
            "seed",
            "candidates",
            "batch_size",
            "corpus",
            "bleu_low",
            "bleu_high",
            "pattern_filter",
            "selection",
            "selection_metric",
            "selection_threshold",
            "selection_max_bleu",
            "unselected_share",
            "selected_at",
            "sources",
            "sources_from_campaign",
            "status",
            "error",
            "progress",
            "stages",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = ["status", "error", "selected_at", "created_at", "started_at", "finished_at"]
        extra_kwargs = {"bleu_low": {"min_value": 0, "max_value": 100}, "bleu_high": {"min_value": 0, "max_value": 100}}

    def get_progress(self, run) -> dict:
        return run.progress()

    def get_stages(self, run) -> dict:
        return stage_progress(run)

    def get_fields(self):
        fields = super().get_fields()
        # The models this server is configured with (GENERATION_MODELS): read at start-up, fixed since.
        fields["model"] = StrictChoiceField(choices=model_names(), required=False, help_text="The chat model.")
        fields["selection_metric"] = StrictChoiceField(
            choices=metric_names(),
            required=False,
            help_text=GenerationRun._meta.get_field("selection_metric").help_text,
        )
        return fields

    def to_representation(self, run):
        data = super().to_representation(run)
        data["campaign"] = run.campaign.slug
        return data

    def validate_campaign(self, slug):
        """Runs can only be started in campaigns this researcher may see; any other is no campaign (404)."""
        request = self.context.get("request")
        campaign = Campaign.objects.visible_to(request.user).filter(slug=slug).first() if request else None
        if campaign is None:
            raise NotFound(f"No campaign {slug!r} among yours.")
        return campaign

    def validate(self, data):
        if "sources" not in data and not data.get("sources_from_campaign"):
            raise serializers.ValidationError({"sources": ["Give sources, or set sources_from_campaign."]})
        return data

    def create(self, data):
        campaign, from_campaign = data.pop("campaign"), data.pop("sources_from_campaign")
        sources = sources_of_campaign(campaign) if from_campaign else data.pop("sources")
        data.pop("sources", None)
        try:
            return start_run(campaign, sources=sources, created_by=self.context["request"].user, **data)
        except GenerationError as error:
            # Each value is well formed (the fields checked that): what is left relates values to each
            # other or to stored data (templates, the campaign's sources, the model's files).
            raise Conflict({"detail": str(error)}) from None


class GenerationOutputSerializer(serializers.ModelSerializer):
    source = serializers.CharField(source="source.text")
    source_id = serializers.CharField(source="source.public_id")
    pair_id = serializers.CharField(source="pair.external_id", default=None)
    sent_to_judges = serializers.BooleanField(
        source="pair.chosen", default=None, allow_null=True, help_text="Whether judges get it (empty: no selection)."
    )

    class Meta:
        model = GenerationOutput
        fields = [
            "source_id",
            "source",
            "template",
            "candidate",
            "seed",
            "raw_output",
            "text",
            "accepted",
            "reject_reason",
            "pair_id",
            "rank",
            "selection_score",
            "selected",
            "sent_to_judges",
        ]


CONFLICT = OpenApiResponse(DETAIL, description="The run is in no state for this (cancelling a finished run).")


class GenerationRunViewSet(
    mixins.CreateModelMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    """Generation runs; POST queues one on the `gpu` workers, GET follows its status and progress."""

    serializer_class = GenerationRunSerializer

    @extend_schema(
        responses={
            201: GenerationRunSerializer,
            404: OpenApiResponse(DETAIL, description="No such campaign among yours."),
        }
    )
    def create(self, request, *args, **kwargs):
        return super().create(request, *args, **kwargs)

    @extend_schema(
        parameters=[
            OpenApiParameter("campaign", str, description="only this campaign's runs (slug)", pattern=NO_NUL_PATTERN)
        ]
    )
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    def get_queryset(self):
        visible = Campaign.objects.visible_to(self.request.user)
        runs = GenerationRun.objects.filter(campaign__in=visible).select_related("campaign").order_by("-pk")
        slug = single_query_value(self.request, "campaign")
        return runs.filter(campaign__slug=slug) if slug else runs

    @extend_schema(request=None, responses={200: GenerationRunSerializer, 409: CONFLICT})
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        run = self.get_object()
        if not run.cancel():
            message = f"the run is {run.status}; only an active run can be cancelled"
            return Response({"detail": message}, status=status.HTTP_409_CONFLICT)
        return Response(self.get_serializer(run).data)

    @extend_schema(request=None, responses={200: GenerationRunSerializer, 409: CONFLICT})
    @action(detail=True, methods=["post"])
    def resume(self, request, pk=None):
        run = self.get_object()
        if run.status == GenerationRun.Status.DONE:
            return Response({"detail": "the run is done; nothing to resume"}, status=status.HTTP_409_CONFLICT)
        resume_run(run)
        return Response(self.get_serializer(run).data)

    @extend_schema(request=None, responses=GenerationOutputSerializer(many=True))
    @action(detail=True, methods=["get"], serializer_class=GenerationOutputSerializer)
    def outputs(self, request, pk=None):
        # The paging is checked first, as on every list: a bad `limit` is a 400 whatever the run.
        self.paginator.get_limit(request), self.paginator.get_offset(request)
        run = self.get_object()
        page = self.paginate_queryset(run.outputs.select_related("source", "pair"))
        return self.get_paginated_response(GenerationOutputSerializer(page, many=True).data)

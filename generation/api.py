"""REST API for generation runs: create one, follow its progress, cancel or resume it, read its outputs."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from campaigns.models import Campaign

from .errors import GenerationError
from .models import GenerationOutput, GenerationRun, sources_of_campaign
from .selection import stage_progress
from .tasks import resume_run, start_run


class GenerationRunSerializer(serializers.ModelSerializer):
    campaign = serializers.SlugRelatedField(slug_field="slug", queryset=Campaign.objects.none())
    templates = serializers.ListField(child=serializers.CharField(), allow_empty=False)
    sources = serializers.ListField(
        child=serializers.CharField(allow_blank=True),
        required=False,
        write_only=True,
        help_text="Sentences to paraphrase.",
    )
    sources_from_campaign = serializers.BooleanField(
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

    def get_progress(self, run) -> dict:
        return run.progress()

    def get_stages(self, run) -> dict:
        return stage_progress(run)

    def get_fields(self):
        fields = super().get_fields()
        # Runs can only be started in campaigns this researcher may see.
        request = self.context.get("request")
        if request is not None:
            fields["campaign"].queryset = Campaign.objects.visible_to(request.user)
        return fields

    def validate(self, data):
        if not data.get("sources") and not data.get("sources_from_campaign"):
            raise serializers.ValidationError("give sources, or set sources_from_campaign")
        return data

    def create(self, data):
        campaign, from_campaign = data.pop("campaign"), data.pop("sources_from_campaign")
        sources = sources_of_campaign(campaign) if from_campaign else data.pop("sources")
        data.pop("sources", None)
        try:
            return start_run(campaign, sources=sources, created_by=self.context["request"].user, **data)
        except GenerationError as error:
            raise serializers.ValidationError({"detail": str(error)}) from None


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


class GenerationRunViewSet(
    mixins.CreateModelMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    """Generation runs; POST queues one on the `gpu` workers, GET follows its status and progress."""

    serializer_class = GenerationRunSerializer

    @extend_schema(parameters=[OpenApiParameter("campaign", str, description="only this campaign's runs (slug)")])
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    def get_queryset(self):
        visible = Campaign.objects.visible_to(self.request.user)
        runs = GenerationRun.objects.filter(campaign__in=visible).select_related("campaign").order_by("-pk")
        slug = self.request.query_params.get("campaign")
        return runs.filter(campaign__slug=slug) if slug else runs

    @extend_schema(request=None, responses=GenerationRunSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        run = self.get_object()
        if not run.cancel():
            message = f"the run is {run.status}; only an active run can be cancelled"
            return Response({"detail": message}, status=status.HTTP_409_CONFLICT)
        return Response(self.get_serializer(run).data)

    @extend_schema(request=None, responses=GenerationRunSerializer)
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
        run = self.get_object()
        page = self.paginate_queryset(run.outputs.select_related("source", "pair"))
        return self.get_paginated_response(GenerationOutputSerializer(page, many=True).data)

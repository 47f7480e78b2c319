"""Generation runs, their sources and outputs, and a campaign's own prompt templates.

A run asks a chat LLM for paraphrases of its sources with one or more templates
(the paper's section 4.2.2 and appendix A.2), cleans every raw output, keeps the
rejected ones with a reason, and imports the accepted ones as pairs whose
metadata records how they were made. Outputs are unique per (run, source,
template, candidate), so a batch that runs twice or resumes after a crash
never duplicates them. The tables keep the names they had in ``campaigns``.
"""

import csv
import hashlib
import io
import logging
import time
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import OperationalError, models, transaction
from django.urls import reverse
from django.utils import timezone

from campaigns.importers import CorpusImportError, import_rows
from campaigns.models import Campaign, Pair
from metrics.backends import BackendUnavailable
from metrics.filters import bleu_range_problem, bleu_range_reason, length_reason
from metrics.loading import EMBEDDED
from metrics.registry import metric_names
from parasol import llm_backends
from parasol.progress import time_left

from . import llm
from .cleaning import Cleaned, Cleaner, Rejection, comparable
from .errors import GenerationError
from .templates import (
    BUILTIN_TEMPLATES,
    TEMPLATE_BLEU_RANGES,
    ChatTemplate,
    check_template,
    resolve_template,
    turns_of_dicts,
)

logger = logging.getLogger(__name__)

SELECTION_METRIC = "parapluie_fs_direct"  # the ParaPLUIE paper's best variant
RATE_WINDOW_SECONDS = 600  # the run's recent rate, and so its time left, counts the outputs of the last 10 minutes


# Sources --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SourceRow:
    text: str
    external_id: str = field(default="", compare=False)


def parse_sources(data, filename=""):
    """Sources from a file: a CSV with a ``source`` column (and optionally ``id``), else one per line."""
    text = data.decode("utf-8-sig") if isinstance(data, bytes) else data
    first = next((line for line in text.splitlines() if line.strip()), "")
    header = [name.strip().lower() for name in next(csv.reader([first]), [])]
    if "source" in header and (len(header) > 1 or filename.lower().endswith(".csv")):
        rows = [
            SourceRow(record.get("source", "") or "", (record.get("id") or "").strip())
            for record in csv.DictReader(io.StringIO(text), fieldnames=header)
        ][1:]
    else:
        rows = [SourceRow(line) for line in text.splitlines()]
    return _distinct_sources(rows)


def sources_of_campaign(campaign):
    """The distinct sources of the campaign's real pairs, in import order, with their pair ids."""
    rows = campaign.real_pairs.order_by("pk").values_list("source", "external_id")
    return _distinct_sources(SourceRow(source, external_id) for source, external_id in rows)


def _distinct_sources(rows):
    seen, distinct = set(), []
    limit = settings.PARASOL_MAX_SENTENCE_CHARS
    for position, row in enumerate(rows, start=1):
        text = " ".join(row.text.split())
        if len(text) > limit:
            # A source becomes a pair's source sentence: the same limit as every corpus import.
            raise GenerationError(
                f"source {position} has {len(text):,} characters, more than the limit of {limit:,} "
                "(PARASOL_MAX_SENTENCE_CHARS)"
            )
        if text and text not in seen:
            seen.add(text)
            distinct.append(SourceRow(text, row.external_id))
    if len(distinct) > settings.PARASOL_IMPORT_MAX_ROWS:
        raise GenerationError(
            f"more than {settings.PARASOL_IMPORT_MAX_ROWS:,} sources, the limit (PARASOL_IMPORT_MAX_ROWS)"
        )
    return distinct


# Models ---------------------------------------------------------------------------------------


class PromptTemplate(models.Model):
    """A campaign's own generation template, edited by researchers."""

    campaign = models.ForeignKey(Campaign, related_name="prompt_templates", on_delete=models.CASCADE)
    name = models.SlugField(max_length=50, help_text="Letters, digits and hyphens; used to pick the template.")
    system = models.TextField(blank=True, help_text="Optional system message (Mistral's chat template refuses one).")
    turns = models.JSONField(default=list, help_text="[{role, content}, ...]; the last user turn holds {source}.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "campaigns_prompttemplate"
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["campaign", "name"], name="unique_template_per_campaign")]

    def __str__(self):
        return self.name

    def clean(self):
        if self.name in BUILTIN_TEMPLATES:
            raise ValidationError({"name": f"{self.name!r} is a built-in template; choose another name"})
        try:
            check_template(self.system, turns_of_dicts(self.turns))
        except GenerationError as error:
            raise ValidationError({"turns": str(error)}) from None

    def as_chat_template(self):
        return ChatTemplate.from_dict(self.name, {"system": self.system, "turns": self.turns})


class GenerationRun(models.Model):
    """Paraphrases of a list of sources by one model, with one or more templates."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        CANCELLED = "cancelled"
        FAILED = "failed"

    class Decoding(models.TextChoices):
        GREEDY = "greedy"
        SAMPLING = "sampling"

    class Selection(models.TextChoices):
        ALL = "all", "keep every candidate"
        TOP = "top", "the top candidate by the metric, per source and template"
        THRESHOLD = "threshold", "every candidate scoring at least the threshold"

    ACTIVE = (Status.QUEUED, Status.RUNNING)

    campaign = models.ForeignKey(Campaign, related_name="generation_runs", on_delete=models.CASCADE)
    templates = models.JSONField(default=list, help_text="Template names, in order.")
    prompts = models.JSONField(default=dict, editable=False, help_text="Each template as it was when the run began.")
    model = models.CharField(max_length=500, default=EMBEDDED, help_text="'embedded' or a name from GENERATION_MODELS.")
    decoding = models.CharField(max_length=10, choices=Decoding.choices, default=Decoding.GREEDY)
    temperature = models.FloatField(default=0.7, validators=[MinValueValidator(0.01), MaxValueValidator(5.0)])
    top_p = models.FloatField(default=0.9, validators=[MinValueValidator(0.01), MaxValueValidator(1.0)])
    max_new_tokens = models.PositiveIntegerField(default=64, validators=[MinValueValidator(1), MaxValueValidator(1024)])
    # Bounded as PostgreSQL's integer is, on SQLite too (which would store 2**63 - 1).
    seed = models.PositiveIntegerField(default=0, validators=[MaxValueValidator(2**31 - 1)])
    candidates = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(20)], help_text="Candidates per source."
    )
    batch_size = models.PositiveSmallIntegerField(
        default=8, validators=[MinValueValidator(1), MaxValueValidator(256)], help_text="Sources per task."
    )
    corpus = models.CharField(max_length=100, default="LLM", help_text="Corpus name of the pairs it creates.")
    # ParaTag's filters (section 4.1): keep outputs whose BLEU with the source lies strictly inside (low, high)
    # and whose lengths pass (`paratag_rejection`).
    bleu_low = models.FloatField(null=True, blank=True, help_text="Keep outputs with BLEU above this (0–100).")
    bleu_high = models.FloatField(null=True, blank=True, help_text="Keep outputs with BLEU below this (0–100).")
    pattern_filter = models.BooleanField(
        default=True,
        help_text="ParaTag's pattern filter (section 4.1): with a Premise/Paraphrase template, keep an answer only "
        "on its Paraphrase line, ended by a newline or the end of the turn.",
    )
    # The selection stage (generation/selection.py): which candidates the judges get, by a metric's scores.
    selection = models.CharField(
        max_length=10,
        choices=Selection.choices,
        default=Selection.ALL,
        help_text="Which candidates go to judges (the top one or those over a threshold, by the metric's scores).",
    )
    selection_metric = models.CharField(
        max_length=40, default=SELECTION_METRIC, help_text="The registered metric whose scores rank the candidates."
    )
    selection_threshold = models.FloatField(
        null=True, blank=True, help_text="With the threshold rule: select candidates scoring at least this."
    )
    selection_max_bleu = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0), MaxValueValidator(100)],
        help_text="Never select a candidate whose BLEU with its source is above this (0–100): diversity.",
    )
    unselected_share = models.FloatField(
        default=0.2,
        validators=[MinValueValidator(0), MaxValueValidator(1)],
        help_text="The share of unselected candidates judges also get, drawn at random, to measure the filter.",
    )
    selected_at = models.DateTimeField(null=True, blank=True, editable=False)
    # ParaTag's collection loop (section 4.3, reports/collection.py): the round, and the detector that filtered it.
    collection_round = models.PositiveSmallIntegerField(null=True, blank=True, editable=False)
    detector = models.CharField(max_length=200, blank=True, editable=False, help_text="The detector version used.")
    detector_train_pairs = models.PositiveIntegerField(null=True, blank=True, editable=False)
    detector_f1 = models.FloatField(null=True, blank=True, editable=False, help_text="Its held-out span F1.")
    # The round's prompt: the pair ids of its examples (judged full paraphrases of the previous round, section 4.1),
    # empty with the one-example prompt; and the loop's budget as this round carried it (its stopping rule).
    prompt_pairs = models.JSONField(default=list, blank=True, editable=False)
    collection_budget = models.JSONField(default=dict, blank=True, editable=False)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED, db_index=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "campaigns_generationrun"
        ordering = ["-created_at", "-pk"]

    def __str__(self):
        return f"{self.campaign.slug}: generation {self.pk}"

    def get_absolute_url(self):
        return reverse("generation-show-run", args=[self.campaign.slug, self.pk])

    @property
    def is_active(self):
        return self.status in self.ACTIVE

    def clean(self):
        problem = bleu_range_problem(self.bleu_low, self.bleu_high)
        if problem:
            raise ValidationError({"bleu_high": problem})

    def decoding_settings(self):
        settings_ = {"strategy": self.decoding, "max_new_tokens": self.max_new_tokens}
        if self.decoding == self.Decoding.SAMPLING:
            settings_.update(temperature=self.temperature, top_p=self.top_p, candidates=self.candidates)
        return settings_

    def expected_outputs(self):
        return self.sources.count() * len(self.templates) * self.candidates

    def progress(self, now=None):
        """Counts for the run's page, the API and the command, with the recent rate and the time left."""
        expected = self.expected_outputs()
        counts = dict(self.outputs.values_list("accepted").annotate(n=models.Count("pk")))
        accepted, rejected = counts.get(True, 0), counts.get(False, 0)
        done = accepted + rejected
        reasons = self.outputs.filter(accepted=False).values_list("reject_reason").annotate(n=models.Count("pk"))
        rate = self.recent_rate(now) if self.is_active else None
        return {
            "expected": expected,
            "done": done,
            "accepted": accepted,
            "rejected": rejected,
            "pairs": self.outputs.filter(pair__isnull=False).count(),
            "percent": round(100 * done / expected) if expected else 100,
            "reject_reasons": {Rejection(reason).label: n for reason, n in reasons.order_by("reject_reason")},
            "waiting": self.waiting_for_backend(),
            "rate": rate,  # outputs per second lately; None when the run is not active
            "time_left": time_left(expected - done, rate),
        }

    def recent_rate(self, now=None):
        """Outputs per second over the last RATE_WINDOW_SECONDS (since the run started, if later); 0.0 when none
        came in that time, so no time left is ever given beside a stalled run."""
        now = now or timezone.now()
        if self.started_at is None:
            return 0.0
        since = max(self.started_at, now - timedelta(seconds=RATE_WINDOW_SECONDS))
        seconds = (now - since).total_seconds()
        made = self.outputs.filter(created_at__gte=since, created_at__lte=now).count()
        return made / seconds if made and seconds > 0 else 0.0

    def waiting_for_backend(self):
        """Why this active run's batches wait (its server backend does not answer), or None."""
        backend = llm.server_backend(self.model)
        return llm_backends.why_down(backend.name) if backend is not None and self.is_active else None

    # Status changes are conditional updates: a worker and a researcher may race.

    def _move(self, from_statuses, **changes):
        moved = GenerationRun.objects.filter(pk=self.pk, status__in=from_statuses).update(**changes)
        self.refresh_from_db()
        return moved == 1

    def cancel(self):
        """Stop between batches; outputs and pairs made so far stay."""
        return self._move(self.ACTIVE, status=self.Status.CANCELLED, finished_at=timezone.now())

    def fail(self, message):
        logger.warning("Generation run %s failed: %s", self.pk, message)
        return self._move(self.ACTIVE, status=self.Status.FAILED, error=message, finished_at=timezone.now())

    def reopen(self):
        """Make a cancelled, failed or stalled run queued again; ``tasks.resume_run`` then queues what is missing."""
        self._move(
            [self.Status.CANCELLED, self.Status.FAILED, *self.ACTIVE],
            status=self.Status.QUEUED,
            error="",
            finished_at=None,
        )

    def finish_if_complete(self):
        if self.outputs.count() >= self.expected_outputs():
            self._move([self.Status.RUNNING, self.Status.QUEUED], status=self.Status.DONE, finished_at=timezone.now())

    # Batches

    def missing_sources(self):
        """Keys (pk) of the sources lacking some output, in order."""
        per_source = len(self.templates) * self.candidates
        complete = (
            self.outputs.values("source_id")
            .annotate(n=models.Count("pk"))
            .filter(n__gte=per_source)
            .values("source_id")
        )
        return list(self.sources.exclude(pk__in=complete).order_by("position").values_list("pk", flat=True))

    def missing_source_batches(self):
        """The missing sources, ``batch_size`` at a time."""
        ids = self.missing_sources()
        return [ids[i : i + self.batch_size] for i in range(0, len(ids), self.batch_size)]

    def sources_per_batch(self, speed):
        """How many sources a batch takes: what the model makes in PARASOL_GENERATION_BATCH_SECONDS at
        ``speed`` (outputs per second), never above ``batch_size``; one before any speed is measured, so the
        first outputs come soon and the run's page moves."""
        if not speed:
            return 1
        per_source = len(self.templates) * self.candidates
        fits = int(speed * settings.PARASOL_GENERATION_BATCH_SECONDS / per_source)
        return max(1, min(self.batch_size, fits))

    def run_inline(self, progress=None):
        """Generate every missing source in this process (the command's --inline, and tests), in batches sized
        by time from the speed measured here.

        A server backend that does not answer leaves the run queued, with what it made, for a resume,
        and raises BackendUnavailable: nothing here would retry it.
        """
        pending, speed = self.missing_sources(), None
        while pending:
            size = self.sources_per_batch(speed)
            batch, pending = pending[:size], pending[size:]
            started = time.monotonic()
            try:
                created = self.generate_batch(batch)
            except BackendUnavailable:
                self.reopen()
                raise
            seconds = time.monotonic() - started
            speed = created / seconds if created and seconds > 0 else speed
            if progress:
                progress(created)
            if not self.is_active:
                break
        self.finish_if_complete()

    def generate_batch(self, source_pks):
        """Generate the outputs these sources still lack; returns how many were stored.

        A server backend that does not answer is not a failure: what was stored is kept (and becomes
        pairs), the run stays active and says why it waits (`progress`), and BackendUnavailable goes
        up for the task to retry the batch later, which then makes only what is missing.
        """
        self._move([self.Status.QUEUED], status=self.Status.RUNNING, started_at=timezone.now())
        if self.status != self.Status.RUNNING:
            return 0  # cancelled, failed or done
        stored = 0
        try:
            for name in self.templates:
                self.refresh_from_db(fields=["status"])
                if self.status != self.Status.RUNNING:
                    break  # cancelled between batches
                stored += self._generate_template_batch(name, source_pks)
        except BackendUnavailable as error:
            llm_backends.note_down(error)
            self._attach_outputs()
            raise
        except GenerationError as error:
            self.fail(str(error))
        except OperationalError:
            raise  # the database was busy: the task retries
        except Exception as error:
            self.fail(f"{error.__class__.__name__}: {error}")
            raise
        if self._attach_outputs():
            self.finish_if_complete()
        return stored

    def _attach_outputs(self):
        """What was stored becomes pairs, even when the run stopped half-way; False if the run failed doing it."""
        try:
            self.attach_pairs()
        except CorpusImportError as error:
            # The importer's checks hold here too (the campaign's metadata key cap): the run fails saying so.
            self.fail(f"the outputs could not become pairs: {error}")
            return False
        return True

    def _generate_template_batch(self, name, source_pks):
        template = ChatTemplate.from_dict(name, self.prompts[name])
        have = set(self.outputs.filter(template=name, source_id__in=source_pks).values_list("source_id", "candidate"))
        todo = [
            source
            for source in self.sources.filter(pk__in=source_pks).order_by("position")
            if any((source.pk, c) not in have for c in range(self.candidates))
        ]
        if not todo:
            return 0
        generator = llm.get_generator(self.model)
        prompts = [generator.render(template.messages(source.text)) for source in todo]
        seed = self.batch_seed(name, todo[0].position)
        candidates = generator.generate(prompts, decoding=self.decoding_settings(), n=self.candidates, seed=seed)
        backend = llm.server_backend(self.model)
        if backend is not None:
            llm_backends.note_answered(backend.name)  # its server is back, if it was down
        # Judges should not see the same pair twice: an output equal to one already accepted is a duplicate.
        seen = {
            (source_pk, comparable(text))
            for source_pk, text in self.outputs.filter(source__in=todo, accepted=True).values_list("source_id", "text")
        }
        cleaner = Cleaner(template.answer_format, pattern_filter=self.pattern_filter)
        outputs = []
        for source, results in zip(todo, candidates):
            for index, result in enumerate(results):
                raw, finished, failure = llm.Candidate(*result)
                if failure:  # the server refused it: its words kept where the output would be
                    raw, cleaned = failure, Cleaned("", Rejection.SERVER_FAILED)
                else:
                    cleaned = cleaner.clean(raw, source.text, finished=finished)
                if cleaned.accepted and (source.pk, comparable(cleaned.text)) in seen:
                    cleaned = Cleaned(cleaned.text, Rejection.DUPLICATE)
                elif cleaned.accepted:
                    cleaned = Cleaned(cleaned.text, self.paratag_rejection(source.text, cleaned.text) or "")
                seen.add((source.pk, comparable(cleaned.text)))
                outputs.append(
                    GenerationOutput(
                        run=self,
                        source=source,
                        template=name,
                        candidate=index,
                        seed=seed,
                        raw_output=raw,
                        text=cleaned.text,
                        accepted=cleaned.accepted,
                        reject_reason=cleaned.reject_reason,
                        generator_revision=getattr(generator, "revision", ""),
                    )
                )
        # A batch that runs twice (redelivery after a crash) writes only what is missing.
        GenerationOutput.objects.bulk_create(outputs, ignore_conflicts=True)
        return len(outputs)

    def paratag_rejection(self, source, hypothesis):
        """ParaTag's filters (section 4.1) when the run sets a BLEU range: the Rejection, or None to keep the pair.

        The BLEU range comes with the length checks, as in the paper; a run without a range applies neither.
        """
        if self.bleu_low is None and self.bleu_high is None:
            return None
        low = self.bleu_low if self.bleu_low is not None else float("-inf")
        high = self.bleu_high if self.bleu_high is not None else float("inf")
        if bleu_range_reason(source, hypothesis, low, high):
            return Rejection.BLEU_RANGE
        return Rejection.LENGTHS if length_reason(source, hypothesis) else None

    def batch_seed(self, template, first_position):
        """A seed per (template, batch), so a resumed batch samples as the first attempt would have."""
        digest = hashlib.sha256(f"{self.seed}:{template}:{first_position}".encode()).hexdigest()
        return int(digest[:8], 16)

    def attach_pairs(self):
        """Import the accepted outputs that have no pair yet; returns how many pairs were created."""
        with transaction.atomic():
            GenerationRun.objects.select_for_update().filter(pk=self.pk).first()  # one importer at a time
            outputs = list(self.outputs.filter(accepted=True, pair__isnull=True).select_related("source"))
            if not outputs:
                return 0
            ids = [output.pair_external_id() for output in outputs]
            existing = set(self.campaign.pairs.filter(external_id__in=ids).values_list("external_id", flat=True))
            rows = [output.pair_row() for output, pair_id in zip(outputs, ids) if pair_id not in existing]
            created = import_rows(self.campaign, rows, corpus=self.corpus).count if rows else 0
            pairs = dict(self.campaign.pairs.filter(external_id__in=ids).values_list("external_id", "pk"))
            for output, pair_id in zip(outputs, ids):
                output.pair_id = pairs[pair_id]
            GenerationOutput.objects.bulk_update(outputs, ["pair"])
            if self.selects:
                # Held back from judges (annotation.assignment.open_pairs) until the selection draws them.
                Pair.objects.filter(pk__in=[output.pair_id for output in outputs]).update(chosen=False)
        return created

    def round_provenance(self):
        """A collection round's facts, as its pairs' metadata records them ({} outside the loop)."""
        if self.collection_round is None:
            return {}
        return {
            "collection_round": self.collection_round,
            "detector": self.detector,
            "detector_train_pairs": self.detector_train_pairs,
            "detector_f1": self.detector_f1,
        }

    @property
    def selects(self):
        """Whether a selection stage decides which candidates judges get (else all of them go)."""
        return self.selection != self.Selection.ALL


class GenerationSource(models.Model):
    """One sentence to paraphrase, in the run's order."""

    run = models.ForeignKey(GenerationRun, related_name="sources", on_delete=models.CASCADE)
    position = models.PositiveIntegerField()
    text = models.TextField()
    external_id = models.CharField(max_length=200, blank=True, help_text="Its id in the uploaded file or campaign.")

    class Meta:
        db_table = "campaigns_generationsource"
        ordering = ["position"]
        constraints = [models.UniqueConstraint(fields=["run", "position"], name="unique_source_position_per_run")]

    def __str__(self):
        return self.text

    @property
    def public_id(self):
        """The id the outputs' pairs carry (`metadata["source_id"]`): its external id, else `s<position>`."""
        return self.external_id or f"s{self.position}"


class GenerationOutput(models.Model):
    """One candidate for one source and template: the raw text, the cleaned one, and what became of it."""

    run = models.ForeignKey(GenerationRun, related_name="outputs", on_delete=models.CASCADE)
    source = models.ForeignKey(GenerationSource, related_name="outputs", on_delete=models.CASCADE)
    template = models.CharField(max_length=50)
    candidate = models.PositiveSmallIntegerField(default=0)
    seed = models.BigIntegerField(default=0, help_text="The seed set before the batch that made it.")
    raw_output = models.TextField()
    text = models.TextField(blank=True, help_text="The cleaned hypothesis.")
    accepted = models.BooleanField(default=False)
    reject_reason = models.CharField(max_length=20, blank=True, choices=Rejection.choices())
    generator_revision = models.CharField(max_length=100, blank=True)
    pair = models.ForeignKey(Pair, null=True, blank=True, related_name="+", on_delete=models.SET_NULL)
    # The selection stage's verdict, empty until it ran: the rank among its source's candidates for the
    # template (1 = best), the metric's score, whether it was selected.
    rank = models.PositiveSmallIntegerField(null=True, blank=True, editable=False)
    selection_score = models.FloatField(null=True, blank=True, editable=False)
    selected = models.BooleanField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "campaigns_generationoutput"
        ordering = ["source__position", "template", "candidate"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "source", "template", "candidate"], name="unique_output_per_run_source_template"
            )
        ]

    def __str__(self):
        return f"{self.run_id}/{self.source_id}/{self.template}/{self.candidate}"

    def pair_external_id(self):
        return f"gen{self.run_id}-{self.source.position}-{self.template}-{self.candidate}"

    def pair_row(self):
        run = self.run
        return {
            "id": self.pair_external_id(),
            "source": self.source.text,
            "hypothesis": self.text,
            "metadata": {
                "generator": run.model,
                "generator_revision": self.generator_revision,
                "template": self.template,
                "decoding": run.decoding_settings(),
                "seed": self.seed,
                "candidate": self.candidate,
                "raw_output": self.raw_output,
                "generation_run": run.pk,
                "source_id": self.source.public_id,
                **run.round_provenance(),
            },
        }


# Creating a run -------------------------------------------------------------------------------


def create_run(campaign, *, sources, templates, created_by=None, scored_here=False, **options):
    """Check everything and store the run and its sources (``tasks.start_run`` also queues it).

    ``templates``: names (a campaign's or a built-in), or ChatTemplates. GenerationError says what
    is wrong, and nothing is stored then. ``options`` are GenerationRun fields: model, decoding,
    temperature, top_p, max_new_tokens, seed, candidates, batch_size, corpus, pattern_filter...
    """
    if not templates:
        raise GenerationError("choose at least one template")
    resolved = {}
    for template in templates:  # a name, or a ChatTemplate built by the caller (ParaTag's loop)
        if isinstance(template, ChatTemplate):
            check_template(template.system, template.turns)
        else:
            template = resolve_template(campaign, template)
        resolved.setdefault(template.name, template)
    templates = list(resolved)
    prompts = {name: template.as_dict() for name, template in resolved.items()}
    sources = [row if isinstance(row, SourceRow) else SourceRow(str(row)) for row in sources]
    sources = _distinct_sources(sources)
    if not sources:
        raise GenerationError("no sources: give at least one sentence to paraphrase")
    options = _with_defaults(templates, options)
    run = GenerationRun(campaign=campaign, templates=templates, prompts=prompts, created_by=created_by, **options)
    try:
        run.full_clean(exclude=["campaign", "created_by"])
    except ValidationError as error:
        raise GenerationError(
            "; ".join(f"{name}: {' '.join(messages)}" for name, messages in error.message_dict.items())
        ) from None
    if run.decoding == GenerationRun.Decoding.GREEDY and run.candidates > 1:
        raise GenerationError("greedy decoding gives one candidate per source: use sampling for more")
    check_selection(run, scored_here=scored_here)
    llm.check_model(run.model)
    with transaction.atomic():
        run.save()
        GenerationSource.objects.bulk_create(
            GenerationSource(run=run, position=i, text=row.text, external_id=row.external_id[:200])
            for i, row in enumerate(sources, start=1)
        )
    return run


def _with_defaults(templates, options):
    """A template's paper filters (ParaTag's BLEU range) unless the run sets a range; selecting the top
    candidate when there are several unless the run says otherwise."""
    options = dict(options)
    ranges = [TEMPLATE_BLEU_RANGES[name] for name in templates if name in TEMPLATE_BLEU_RANGES]
    if ranges and options.get("bleu_low") is None and options.get("bleu_high") is None:
        options["bleu_low"], options["bleu_high"] = ranges[0]
    if not options.get("selection"):
        several = (options.get("candidates") or 1) > 1
        options["selection"] = GenerationRun.Selection.TOP if several else GenerationRun.Selection.ALL
    return options


def check_selection(run, scored_here=False):
    """GenerationError unless the run's selection can happen: a registered metric, enabled unless the caller
    scores the candidates itself (`scored_here`: ParaTag's loop); a threshold when asked."""
    if not run.selects:
        return
    if run.selection_metric not in metric_names():
        raise GenerationError(f"unknown selection metric {run.selection_metric!r}; known: {', '.join(metric_names())}")
    if run.selection_metric not in settings.PARASOL_METRICS and not scored_here:
        raise GenerationError(
            f"the selection metric {run.selection_metric} is not enabled (PARASOL_METRICS): "
            "its scores would never come, so nothing could be selected"
        )
    if run.selection == GenerationRun.Selection.THRESHOLD and run.selection_threshold is None:
        raise GenerationError("the threshold rule needs a threshold: set selection_threshold")

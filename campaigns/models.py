"""Campaigns and the sentence pairs they ask judges to label."""

import json
import sys

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import connection, models, transaction
from django.urls import reverse
from django.utils import timezone

from metrics.paratag import LATEST, campaign_detectors_path, detector_versions
from metrics.registry import METRICS, llm_backend_metrics
from metrics.words import TOKENISATION, word_tokens

from . import task_types
from .task_types import default_task_type  # migration 0015 names it here

TRAINING_TRIAL_SIZE = 5
# PEM's artificial systems (section 5.1): control pairs with fixed "human" ratings that the
# metrics score and the analysis joins to the judges' mean; no judge is ever shown them.
PEM_CONTROL_CORPUS = "pem-control"
# A training pair's feedback, kept in its metadata: the expected answer (in the task type's
# form) and one sentence of why (annotation.training reads them).
TRAINING_FEEDBACK_KEYS = ("expected", "explanation")


# A campaign's choice of detector (`Campaign.paratag_detector`): empty, or <campaign id>/<version>; the API
# publishes the pattern, `detector_choice_problem` checks the same form and then what is stored.
DETECTOR_CHOICE_PATTERN = r"^([0-9]{1,18}/[^\x00]+)?$"  # no NUL (the server refuses one), as the schema says
DETECTOR_CHOICE_FORMAT = (
    "Name a detector as <campaign id>/<version>, e.g. 7/0003-news, or leave it empty for the latest."
)

# Slugs that name researcher pages (/campaigns/new/) rather than a campaign.
RESERVED_SLUGS = frozenset({"new"})


def refuse_reserved_slug(slug):
    if slug in RESERVED_SLUGS:
        raise ValidationError(f"“{slug}” is reserved; choose another slug.")


# Said of any slug already in use, live or in someone's trash: whose it is, and where, is not the asker's business.
SLUG_NOT_AVAILABLE = "This slug is not available; choose another."
# Judges' links and bookmarks name the slug: only the owner may break them.
SLUG_OWNER_ONLY = "Only the campaign's owner can change its slug (judges' links use it)."


def slug_change_problem(campaign, new_slug, may_manage):
    """Why the campaign may not take the slug `new_slug` from someone who `may_manage` it or not; None if it may."""
    if campaign.pk is None or new_slug == campaign.slug or may_manage:
        return None
    return SLUG_OWNER_ONLY


class CampaignQuerySet(models.QuerySet):
    def live(self):
        """Campaigns not in the trash."""
        return self.filter(deleted_at__isnull=True)

    def visible_to(self, user):
        """The live campaigns a researcher owns or that are shared with them; superusers see all."""
        if user.is_superuser:
            return self.live()
        if not (user.is_authenticated and user.is_staff):
            return self.none()
        return self.live().filter(models.Q(created_by=user) | models.Q(shared_with=user)).distinct()

    def with_counts(self):
        """Each campaign with `n_pairs` (real pairs) and `n_judgments` (counted: no training, no control)."""
        real = models.Q(pairs__is_training=False, pairs__is_control=False)
        # `judgments` is annotation's reverse name on Pair: this layer names it without importing it.
        counted = real & models.Q(pairs__judgments__is_training=False)
        return self.annotate(
            n_pairs=models.Count("pairs", filter=real, distinct=True),
            n_judgments=models.Count("pairs__judgments", filter=counted, distinct=True),
        )

    def trash_of(self, user):
        """Deleted campaigns this user may restore: their own (a superuser: all)."""
        trashed = self.filter(deleted_at__isnull=False)
        return trashed if user.is_superuser else trashed.filter(created_by=user)


# The same bounds on every database (SQLite would store 2**63 - 1; PostgreSQL refuses above 2**31 - 1),
# stated by the model, so forms, the admin and the API's schema all enforce and publish them.
MAX_PAIRS_PER_JUDGE = 10_000
MAX_JUDGMENTS_PER_PAIR = 100


def llm_backends_problem(value) -> str | None:
    """Why `value` cannot be a campaign's `llm_backends`, or None: LLM metrics to configured backend names."""
    if value in (None, ""):
        return None
    if not isinstance(value, dict):
        return 'Give an object of LLM metric names to backend names, e.g. {"parapluie_direct": "in-process"}.'
    metrics, backends = llm_backend_metrics(), settings.PARASOL_LLM_BACKENDS
    for metric, name in value.items():
        if metric not in metrics:
            return f"{str(metric)[:60]!r} is not an LLM metric (LLM metrics: {', '.join(metrics)})."
        if not isinstance(name, str) or name not in backends:
            return f"{metric}: no LLM backend is named {str(name)[:60]!r} here (backends: {', '.join(backends)})."
    return None


def validate_llm_backends(value):
    """The field's validator: the form, the admin and the API all run it (ModelForm and DRF copy it)."""
    problem = llm_backends_problem(value)
    if problem:
        raise ValidationError(problem)


class Campaign(models.Model):
    slug = models.SlugField(max_length=80, unique=True, help_text="Used in the public judge link /j/<slug>/.")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    pairs_per_judge = models.PositiveIntegerField(
        default=50,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_PAIRS_PER_JUDGE)],
        help_text="Real pairs each judge labels after the training trial.",
    )
    overlap_target = models.PositiveIntegerField(
        default=3,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_JUDGMENTS_PER_PAIR)],
        help_text="Judgments wanted per pair.",
    )
    # Adaptive overlap: the first `overlap_target` judges of a pair decide whether it
    # needs more. If they all give the same binary label the pair is done; if not,
    # more judges are asked, up to `overlap_max`.
    adaptive_overlap = models.BooleanField(
        default=False,
        help_text="Stop a pair once its first judges agree (paraphrase or not); ask more, up to the maximum, if not.",
    )
    overlap_max = models.PositiveIntegerField(
        default=5,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_JUDGMENTS_PER_PAIR)],
        help_text="With adaptive overlap: judgments wanted per pair whose first judges disagree.",
    )
    # Prediction-powered estimates (reports.analysis.ppi): the metric predicting labels, and active choice.
    ppi_predictor = models.CharField(
        max_length=40,
        blank=True,
        help_text="The metric whose scores predict labels in the report's estimates, and guide active choice "
        "(empty: the best on the judged pairs, chosen by cross-fitting).",
    )
    active_choice = models.BooleanField(
        default=False,
        help_text="Judges see pairs drawn with probabilities that grow with the predictor's uncertainty "
        "(drawn in waves from the campaign page); the estimates weight each "
        "judged pair by its probability. Off: every pair is judged, least-judged first.",
    )
    active_budget = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(10_000_000)],
        help_text="With active choice: how many pairs to judge, in expectation.",
    )
    is_open = models.BooleanField(default=True, help_text="Closed campaigns accept no new judgments.")
    # A registered task type's name (the TASK_TYPES setting, looked up by `campaigns.task_types`).
    task_type = models.CharField(
        max_length=40,
        choices=task_types.choices,
        default=default_task_type,
        help_text="What judges are asked about each pair (a task type's name).",
    )
    # Which metadata keys name the system (generator) of a pair; empty: `system` when the
    # pairs have one, else generator + template (reports.analysis.systems.system_names).
    system_keys = models.CharField(
        max_length=200,
        blank=True,
        help_text="Metadata key(s), comma-separated, naming the system that produced each hypothesis "
        "(empty: the 'system' column of an imported file, else generator + template).",
    )
    span_highlight = models.BooleanField(
        default=False,
        help_text="Span tagging: highlight the words that differ (off by default: it would suggest the answer).",
    )
    # Which span detector scores this campaign (metric `paratag`): empty, the latest of its own;
    # else "<campaign pk>/<version>", a version of its own or of a campaign its researcher could
    # see when choosing. Never another campaign's "latest": nobody else's retraining changes these scores.
    paratag_detector = models.CharField(
        max_length=120,
        blank=True,
        default="",
        help_text="Span detector of metric paratag: empty for this campaign's latest, or <campaign id>/<version> "
        "(e.g. 7/0003-news) to name one version of a campaign you can see.",
    )
    # Where each LLM metric asks its model: {metric: backend name} from PARASOL_LLM_BACKENDS; a metric
    # left out uses PARASOL_LLM_BACKEND. Names only: the URLs and keys stay in the deployment's settings.
    llm_backends = models.JSONField(
        default=dict,
        blank=True,
        validators=[validate_llm_backends],
        help_text='LLM backend per LLM metric, e.g. {"parapluie_direct": "lab-vllm"}; '
        "a metric left out uses the deployment's default.",
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    shared_with = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        blank=True,
        related_name="shared_campaigns",
        help_text="Other researchers who may see and manage this campaign.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Set when the owner deletes the campaign: hidden everywhere, restorable from the trash.
    deleted_at = models.DateTimeField(null=True, blank=True, editable=False)
    # Bumped under a row lock by every assignment: serialises concurrent
    # assignment in one campaign on PostgreSQL and SQLite alike.
    assignment_seq = models.PositiveBigIntegerField(default=0, editable=False)

    objects = CampaignQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return self.name

    def clean(self):
        if self.adaptive_overlap and self.overlap_max < self.overlap_target:
            raise ValidationError({"overlap_max": "The maximum cannot be below the judgments wanted per pair."})
        if self.ppi_predictor and self.ppi_predictor not in METRICS:
            raise ValidationError({"ppi_predictor": f"No metric named {self.ppi_predictor!r}."})
        if self.active_choice and not self.ppi_predictor:
            raise ValidationError({"ppi_predictor": "Active choice needs a predictor: the metric guiding it."})
        if self.active_choice and not self.active_budget:
            raise ValidationError({"active_budget": "Active choice needs a budget: how many pairs to judge."})

    def detector_choice(self) -> tuple[int, str]:
        """(campaign pk, version) of the detector that scores this campaign; version LATEST: its own latest."""
        if not self.paratag_detector:
            return self.pk, LATEST
        campaign_pk, _, version = self.paratag_detector.partition("/")
        return int(campaign_pk), version

    def detector_choice_problem(self, value, user) -> str | None:
        """Why `user` may not make `value` this campaign's detector (`paratag_detector`), or None if they may."""
        if not value or value == self.paratag_detector:  # kept as it was: chosen by someone who could see it
            return None
        campaign_pk, slash, version = value.partition("/")
        # ASCII digits, and few enough for any database's integer (SQLite raises past 2**63).
        if not (slash and campaign_pk.isascii() and campaign_pk.isdigit() and len(campaign_pk) <= 18 and version):
            return DETECTOR_CHOICE_FORMAT
        visible = Campaign.objects.visible_to(user) if user is not None else Campaign.objects.none()
        if int(campaign_pk) != self.pk and not visible.filter(pk=int(campaign_pk)).exists():
            return f"No campaign you can see has the id {campaign_pk}."
        stored = detector_versions(campaign_detectors_path(campaign_pk))
        if version not in stored:
            return f"Campaign {campaign_pk} has no detector {version!r} (stored: {', '.join(stored) or 'none'})."
        return None

    def choose_llm_backends(self, choices: dict):
        """Set the backend of the LLM metrics in `choices` ({metric: name}), keeping the others; ValidationError."""
        merged = {**(self.llm_backends or {}), **choices}
        validate_llm_backends(merged)
        self.llm_backends = merged
        self.save(update_fields=["llm_backends", "updated_at"])

    def llm_backend_name(self, metric) -> str:
        """The backend `metric` asks for this campaign: its own choice, else the deployment's default."""
        return (self.llm_backends or {}).get(metric) or settings.PARASOL_LLM_BACKEND

    @property
    def max_judgments_per_pair(self):
        """The most judgments any one pair may collect."""
        return self.overlap_max if self.adaptive_overlap else self.overlap_target

    def overlap_note(self):
        """How many judgments each pair got, in words, for reports."""
        if not self.adaptive_overlap:
            return None
        return (
            f"{self.name}: adaptive overlap. Each pair had {self.overlap_target} judges first; when they all gave "
            f"the same binary label the pair stopped there, otherwise more judges were asked, up to "
            f"{self.overlap_max}. Agreement on stopped pairs is high by construction."
        )

    def get_absolute_url(self):
        return reverse("annotation-show-campaign", args=[self.slug])

    def is_managed_by(self, user):
        """Only the owner (or a superuser) deletes the campaign or changes who it is shared with."""
        return user.is_superuser or (user.is_authenticated and self.created_by_id == user.pk)

    def move_to_trash(self):
        """Delete recoverably: closed and hidden, every pair and judgment kept."""
        self.deleted_at = timezone.now()
        self.is_open = False
        self.save(update_fields=["deleted_at", "is_open", "updated_at"])

    def restore(self):
        """Back from the trash, closed: the researcher reopens it when ready."""
        self.deleted_at = None
        self.save(update_fields=["deleted_at", "updated_at"])

    def get_judge_url(self):
        return reverse("annotation-show-welcome", args=[self.slug])

    def has_started(self):
        """Whether a judge has been shown any of its pairs (its task type is then fixed)."""
        return self.pairs.filter(assignments__isnull=False).exists()

    def task_type_problem(self, task_type):
        """Why the campaign cannot take `task_type` (unknown, or judges have started), or None."""
        try:
            task_types.get_task_type(task_type)
        except task_types.UnknownTaskType as error:
            return str(error)
        if self.pk and task_type != Campaign.objects.get(pk=self.pk).task_type and self.has_started():
            return "judges have started this campaign: its task type can no longer change"
        return None

    def system_key_list(self):
        """The metadata keys naming each pair's system, or None for the default."""
        keys = [key.strip() for key in self.system_keys.split(",") if key.strip()]
        return keys or None

    def metadata_keys_stored(self) -> set[str]:
        """The distinct metadata keys of all the campaign's pairs, read by the database (not row by row)."""
        table = Pair._meta.db_table
        if connection.vendor == "postgresql":
            sql = (
                f"SELECT DISTINCT jsonb_object_keys(metadata) FROM {table} "
                "WHERE campaign_id = %s AND jsonb_typeof(metadata) = 'object'"
            )
        else:
            sql = (
                f"SELECT DISTINCT entry.key FROM {table}, json_each({table}.metadata) AS entry "
                f"WHERE {table}.campaign_id = %s AND json_type({table}.metadata) = 'object'"
            )
        with connection.cursor() as cursor:
            cursor.execute(sql, [self.pk])
            return {key for (key,) in cursor.fetchall()}

    @property
    def real_pairs(self):
        return self.pairs.filter(is_training=False, is_control=False)

    @property
    def awaits_active_draw(self):
        """Active choice with pairs in no wave drawn yet: judges get pairs again once the next wave is drawn."""
        return self.active_choice and self.real_pairs.filter(choice_wave__isnull=True).exists()

    @property
    def awaits_first_draw(self):
        """Active choice before its first wave: no judge has been handed a real pair."""
        return self.active_choice and not self.real_pairs.filter(choice_wave__isnull=False).exists()

    @property
    def control_pairs(self):
        return self.pairs.filter(is_control=True)

    @property
    def check_pairs(self):
        """The control items judges are checked with (PEM's fixed-score systems are not shown to judges)."""
        return self.control_pairs.exclude(corpus=PEM_CONTROL_CORPUS)

    @property
    def training_pairs(self):
        return self.pairs.filter(is_training=True).order_by("training_position", "pk")

    def ensure_training_pairs(self):
        """Give the campaign the project's default training trial if it has none of its own."""
        with transaction.atomic():
            if not self.pairs.filter(is_training=True).exists():
                defaults = load_default_training_rows(self.task_type)
                self._create_training_pairs(
                    (row["source"], row["hypothesis"], row.get("label"), gold_tags_of_record(row), feedback_of(row))
                    for row in defaults
                )

    def replace_training_pairs(self, rows):
        """Use the first five of `rows` (PairRow-like) as the training trial; refused once judges have trained."""
        rows = list(rows)[:TRAINING_TRIAL_SIZE]
        if len(rows) < TRAINING_TRIAL_SIZE:
            raise ValueError(f"A training trial needs {TRAINING_TRIAL_SIZE} pairs; the file has {len(rows)}.")
        with transaction.atomic():
            training = self.pairs.filter(is_training=True)
            if training.filter(assignments__isnull=False).exists():
                raise ValueError("Judges have already started this campaign's training trial; it can no longer change.")
            training.delete()
            self._create_training_pairs(
                (row.source, row.hypothesis, row.gold_label, row.gold_tags, row.metadata) for row in rows
            )
        return len(rows)

    def _create_training_pairs(self, rows):
        """Training pairs, in order, from (source, hypothesis, gold label, reference tagging, metadata) tuples."""
        Pair.objects.bulk_create(
            Pair.build(
                self,
                external_id=f"training-{position}",
                corpus="training",
                source=source,
                hypothesis=hypothesis,
                gold_label=paraphrase,
                gold_tags=tags,
                metadata=metadata,
                training_position=position,
            )
            for position, (source, hypothesis, paraphrase, tags, metadata) in enumerate(rows, start=1)
        )


def gold_tags_of_record(record):
    """The reference tagging of a trusted record ({"source_tags": [0/1...], "hypothesis_tags": [...]}), or {}."""
    if "source_tags" not in record:
        return {}
    return {"source": record["source_tags"], "hypothesis": record["hypothesis_tags"]}


def feedback_of(record):
    """The training feedback fields a trusted record gives (expected answer, explanation)."""
    return {key: record[key] for key in TRAINING_FEEDBACK_KEYS if key in record}


def load_default_training_rows(task_type):
    """A task type's default training trial: the first TRAINING_TRIAL_SIZE records of its training file.

    Each type brings its own (`TaskType.training_file`); no shared fallback: another type's expected answers
    and explanations would not fit.
    """
    with open(task_types.get_task_type(task_type).training_file, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return rows[:TRAINING_TRIAL_SIZE]


class Pair(models.Model):
    """A source sentence and a hypothesis (candidate paraphrase) to compare."""

    campaign = models.ForeignKey(Campaign, related_name="pairs", on_delete=models.CASCADE)
    external_id = models.CharField(max_length=200, help_text="The pair's id in the imported file.")
    corpus = models.CharField(max_length=100, blank=True, db_index=True)
    source = models.TextField()
    hypothesis = models.TextField()
    gold_label = models.PositiveSmallIntegerField(
        null=True, blank=True, choices=[(1, "paraphrase"), (0, "non-paraphrase")]
    )
    metadata = models.JSONField(default=dict, blank=True)
    is_training = models.BooleanField(default=False)
    # Hidden control items: shown among real pairs, checked against `gold_label`
    # (the expected answer), excluded from every result.
    is_control = models.BooleanField(default=False)
    training_position = models.PositiveSmallIntegerField(null=True, blank=True)
    # The words judges tag, stored so that a tagging (word indexes) stays valid whatever
    # the tokeniser becomes: {"source": [...], "hypothesis": [...]} (see `word_tokens`), with the version
    # of the tokenisation that made them (pairs from before versions were made by version 1).
    tokens = models.JSONField(default=dict, blank=True)
    tokenisation = models.PositiveSmallIntegerField(default=TOKENISATION, editable=False)
    # A reference tagging (training feedback, or a pre-tagged corpus): 0/1 per stored token,
    # {"source": [...], "hypothesis": [...]}; empty when the pair has none.
    gold_tags = models.JSONField(default=dict, blank=True)
    # Active choice (`Campaign.active_choice`): the chance this pair had of being drawn for judging, and
    # whether it was; empty until the campaign's choice is drawn.
    choice_probability = models.FloatField(null=True, blank=True, editable=False)
    chosen = models.BooleanField(null=True, blank=True, editable=False)
    # The wave whose block the pair fell into (`reports.active`): empty until that wave is drawn.
    choice_wave = models.PositiveSmallIntegerField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pk"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "external_id"], name="unique_pair_id_per_campaign"),
        ]
        indexes = [
            # Covers the report's state of a campaign (count, pk bounds and gold sum of its real pairs):
            # read from this index alone, never from the rows and their sentences.
            models.Index(fields=["campaign", "is_training", "is_control", "gold_label"], name="pair_state"),
        ]

    def __str__(self):
        return f"{self.campaign.slug}:{self.external_id}"

    @classmethod
    def build(
        cls,
        campaign,
        *,
        external_id,
        source,
        hypothesis,
        corpus="",
        gold_label=None,
        metadata=None,
        training_position=None,
        is_control=False,
        gold_tags=None,
        tokenisation=TOKENISATION,
    ):
        """An unsaved pair (for `bulk_create`): the one constructor imports, training, controls and tests share.

        A training position makes it a training pair; `is_control` a hidden control item; `tokenisation`
        the version its words are made by (an older one only to read back a tagging made over it).
        """
        return cls(
            campaign=campaign,
            external_id=external_id,
            corpus=corpus,
            source=source,
            hypothesis=hypothesis,
            gold_label=gold_label,
            metadata=metadata or {},
            is_training=training_position is not None,
            training_position=training_position,
            is_control=is_control,
            tokens=tokens_of(source, hypothesis, tokenisation),
            tokenisation=tokenisation,
            gold_tags=gold_tags or {},
        )

    def words(self, side):
        """One sentence's stored tokens ("source" or "hypothesis"); older pairs get theirs on first use."""
        if not self.tokens:
            self.tokens, self.tokenisation = tokens_of(self.source, self.hypothesis), TOKENISATION
            if self.pk is not None:
                Pair.objects.filter(pk=self.pk).update(tokens=self.tokens, tokenisation=self.tokenisation)
        return self.tokens[side]


class Score(models.Model):
    """One metric's score of one pair under one signature: a fact about the pair, written by the scoring
    workers, read by reports and by generation's selection stage (so it lives here, below them all).

    A score row is unique per (pair, metric, signature): re-running a task or a crashed worker repairs
    rather than duplicates, and scores computed with different settings (model, template,
    tokenisation) are never mixed.
    """

    pair = models.ForeignKey(Pair, related_name="scores", on_delete=models.CASCADE)
    metric = models.CharField(max_length=64)
    signature = models.CharField(max_length=500, help_text="Implementation version, model, template, tokenisation.")
    value = models.FloatField()
    # Per-pair evidence kept for inspection (an LLM oracle's raw answers); null for most metrics.
    details = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # The table keeps the name it had when scores lived in the scoring app: the data version's
        # triggers, raw SQL and every deployment's rows stay as they are (migration campaigns 0018).
        db_table = "scoring_score"
        ordering = ["pair", "metric"]
        constraints = [
            models.UniqueConstraint(fields=["pair", "metric", "signature"], name="one_score_per_pair_metric_signature"),
            # Only finite scores, whoever writes them (metrics.base checks them first): NaN and
            # ±inf lie outside the finite floats on both databases (SQLite stores a NaN as NULL,
            # which the column refuses anyway); a non-finite score would print "inf" in table1.
            models.CheckConstraint(
                condition=models.Q(value__gte=-sys.float_info.max, value__lte=sys.float_info.max),
                name="score_value_finite",
            ),
        ]
        indexes = [
            # A metric's column of a campaign (its pairs' pk range) is read from this index alone,
            # never from the table: the report reads 400,000 scores a metric in a fraction of a second.
            models.Index(fields=["metric", "signature", "pair", "value"], name="score_column"),
            # Only the few scores that keep details: reading them never scans a metric's whole column.
            models.Index(
                fields=["metric", "signature"], condition=models.Q(details__isnull=False), name="score_details_kept"
            ),
        ]

    def __str__(self):
        return f"{self.pair} {self.metric}={self.value:.4f}"


def tokens_of(source, hypothesis, tokenisation=TOKENISATION):
    """The one place a pair's words are computed (display, storage and analysis share them)."""
    return {"source": word_tokens(source, tokenisation), "hypothesis": word_tokens(hypothesis, tokenisation)}

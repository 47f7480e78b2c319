"""Judges, the pairs assigned to them, and their judgments."""

import json
import secrets

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models.fields.json import compile_json_path
from django.utils.translation import gettext_lazy as _

from campaigns.models import Campaign, Pair
from campaigns.task_types import task_type_of

from .tasktypes.similarity.scale import ANSWER_TITLES


class EnglishLevel(models.TextChoices):
    POOR = "poor", _("Poor")
    GOOD = "good", _("Good")
    ADVANCED = "advanced", _("Advanced")
    NATIVE = "native", _("Native")


class Answer(models.TextChoices):
    """The five answers, in the order the protocol shows them."""

    VERY_DIFFERENT = "very_different", _(ANSWER_TITLES["very_different"])
    SLIGHTLY_SIMILAR = "slightly_similar", _(ANSWER_TITLES["slightly_similar"])
    MOSTLY_SIMILAR = "mostly_similar", _(ANSWER_TITLES["mostly_similar"])
    SAME_MEANING = "same_meaning", _(ANSWER_TITLES["same_meaning"])
    DONT_KNOW = "dont_know", _(ANSWER_TITLES["dont_know"])


class ControlKind(models.TextChoices):
    """The hidden control items Parasol builds or takes (`Pair.metadata["control"]`; PEM's are in `criteria_scale`)."""

    IDENTICAL = "identical", _("The source as its own hypothesis")
    UNRELATED = "unrelated", _("Another pair's hypothesis")
    UPLOADED = "uploaded", _("Uploaded by the researcher")


def new_token():
    return secrets.token_urlsafe(24)


class CampaignProtocol(models.Model):
    """How a campaign runs its judges: control items, crowd-platform hand-off, questionnaire."""

    campaign = models.OneToOneField(Campaign, related_name="protocol", on_delete=models.CASCADE)
    control_share = models.FloatField(
        default=0.1,
        validators=[MinValueValidator(0.0), MaxValueValidator(0.5)],
        help_text="Share of each judge's pairs that are hidden control items (0 turns them off).",
    )
    max_judges = models.PositiveIntegerField(null=True, blank=True, help_text="Stop admitting judges after this many.")
    consent_text = models.TextField(blank=True, help_text="Replaces the default consent paragraph.")
    completion_code = models.CharField(max_length=100, blank=True, help_text="Shown at the end (e.g. Prolific).")
    completion_url = models.URLField(blank=True, help_text="Where judges are sent at the end.")
    questionnaire = models.TextField(blank=True, help_text="Closing questions, one per line (answers optional).")

    def __str__(self):
        return f"protocol of {self.campaign}"

    @property
    def questions(self):
        return [line.strip() for line in self.questionnaire.splitlines() if line.strip()]


class Step(models.TextChoices):
    """Where a judge stands in the protocol, in its order; each judge view serves only some steps.

    Joining (consent) creates the judge, so every judge starts at LEVEL. The end (thanks,
    questionnaire) is the PAIRS step with no pair left to the judge, which only
    `assignment.next_assignment` can tell.
    """

    LEVEL = "level", _("your English level")
    GUIDELINES = "guidelines", _("the guidelines")
    TRAINING = "training", _("the training pairs")
    PAIRS = "pairs", _("the pairs")


class JudgmentQuerySet(models.QuerySet):
    def counted(self, include_excluded=False):
        """The judgments results are made of: no training, no control items, no excluded judges."""
        judgments = self.filter(is_training=False, pair__is_training=False, pair__is_control=False)
        return judgments if include_excluded else judgments.filter(judge__excluded=False)


class Judge(models.Model):
    """An anonymous volunteer, known only by a random token."""

    campaign = models.ForeignKey(Campaign, related_name="judges", on_delete=models.CASCADE)
    token = models.CharField(max_length=64, unique=True, default=new_token, editable=False)
    english_level = models.CharField(max_length=16, choices=EnglishLevel.choices, blank=True)
    consented_at = models.DateTimeField()
    guidelines_read_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    excluded = models.BooleanField(default=False, help_text="Left out of results and exports by the researcher.")
    # Crowd platforms (Prolific-style ids passed in the link).
    crowd_participant = models.CharField(max_length=100, blank=True)
    crowd_study = models.CharField(max_length=100, blank=True)
    crowd_session = models.CharField(max_length=100, blank=True)
    questionnaire_answers = models.JSONField(default=dict, blank=True)
    # Positions (1-based, in the real-pair phase) where a hidden control item is shown.
    control_positions = models.JSONField(default=list, blank=True)
    # A keyed hash of the joining address, only to rate-limit joins; never the address itself.
    join_key = models.CharField(max_length=32, blank=True, db_index=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pk"]

    def __str__(self):
        return self.pseudonym

    # What judge URLs carry once the browser holds the judge's cookie: the cookie names the
    # judge, so the secret token stays out of paths, browser history and access logs.
    path_token = "me"

    @property
    def step(self):
        """The judge's step, derived from what they have stored: a level, guidelines read, training answered."""
        if not self.english_level:
            return Step.LEVEL
        if self.guidelines_read_at is None:
            return Step.GUIDELINES
        if self.training_left():
            return Step.TRAINING
        return Step.PAIRS

    def training_left(self):
        """Whether a pair of the campaign's training trial still waits for this judge's answer."""
        answered = self.judgments.filter(is_training=True).values("pair_id")
        return self.campaign.pairs.filter(is_training=True).exclude(pk__in=answered).exists()

    @property
    def pseudonym(self):
        """A stable public id that reveals nothing of the token."""
        return self.pseudonym_of(self.pk)

    @staticmethod
    def pseudonym_of(pk):
        """The pseudonym of the judge with this key (readers of a million judgments make no `Judge` for it)."""
        return f"judge-{pk:05d}"


class Assignment(models.Model):
    """A pair shown (or about to be shown) to one judge, at one position of their sequence."""

    TOP_CHOICES = [("source", "source"), ("hypothesis", "hypothesis")]

    judge = models.ForeignKey(Judge, related_name="assignments", on_delete=models.CASCADE)
    pair = models.ForeignKey(Pair, related_name="assignments", on_delete=models.CASCADE)
    position = models.PositiveIntegerField()
    is_training = models.BooleanField(default=False)
    top = models.CharField(max_length=10, choices=TOP_CHOICES, help_text="Which sentence is shown on top.")
    assigned_at = models.DateTimeField(auto_now_add=True)
    shown_at = models.DateTimeField(null=True, blank=True)
    # With active choice: the probability the pair was drawn with (copied when assigned: kept with the judgment).
    choice_probability = models.FloatField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["judge", "position"]
        constraints = [
            models.UniqueConstraint(fields=["judge", "pair"], name="a_judge_sees_a_pair_once"),
            models.UniqueConstraint(fields=["judge", "position"], name="one_pair_per_position"),
        ]

    def __str__(self):
        return f"{self.judge} #{self.position}: {self.pair}"

    @property
    def top_sentence(self):
        return self.pair.source if self.top == "source" else self.pair.hypothesis

    @property
    def bottom_sentence(self):
        return self.pair.hypothesis if self.top == "source" else self.pair.source


class Judgment(models.Model):
    """One answer; at most one per assignment, so a judgment is never doubled."""

    assignment = models.OneToOneField(Assignment, related_name="judgment", on_delete=models.CASCADE)
    judge = models.ForeignKey(Judge, related_name="judgments", on_delete=models.CASCADE)
    pair = models.ForeignKey(Pair, related_name="judgments", on_delete=models.CASCADE)
    # The answer, whatever the task type, as a JSON object keyed by the type: the 5-way `Answer` under
    # "answer", ratings per criterion, tagged word indexes per sentence (`TaskType.answer`).
    values = models.JSONField(default=dict, blank=True)
    is_training = models.BooleanField(default=False)
    response_ms = models.PositiveIntegerField(null=True, blank=True, help_text="Display to answer, in ms.")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = JudgmentQuerySet.as_manager()

    class Meta:
        ordering = ["pk"]
        indexes = [models.Index(fields=["pair", "is_training"])]

    def __str__(self):
        return f"{self.judge} on {self.pair}: {json.dumps(self.values, sort_keys=True)}"

    @property
    def paraphrase(self):
        """This answer's vote on "is this a paraphrase?" (1, 0, or None), as its campaign's task type declares it."""
        vote = task_type_of(self.pair.campaign).vote
        return None if vote is None else vote.vote_of(self.values)


class JsonKeyText(models.Func):
    """One key of a JSON column as JSON text (`"same_meaning"`, `1`, `true`; NULL without the key), the same on
    SQLite and PostgreSQL.

    A reader of a million answers reads one key in SQL and decodes each distinct text once (`decoded_json`):
    Django's key transforms decode row by row (and on SQLite fail over to the raw text for every string).
    """

    output_field = models.TextField()

    def __init__(self, field, key):
        super().__init__(field)
        self.path = compile_json_path([key])
        self.key = key

    def as_sql(self, compiler, connection, **extra):  # SQLite 3.38+ and MySQL: `->` gives JSON text
        sql, params = compiler.compile(self.source_expressions[0])
        return f"({sql} -> %s)", (*params, self.path)

    def as_postgresql(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        return f"({sql} -> %s)::text", (*params, self.key)


def decoded_json(texts) -> list:
    """JSON texts read in SQL (`JsonKeyText`, or a whole `values` cast to text), each distinct text decoded once
    (NULL: None). Equal texts give the same object: read it, never change it in place."""
    decoded = {text: json.loads(text) for text in set(texts) if text is not None}
    return [decoded.get(text) for text in texts]

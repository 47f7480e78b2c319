"""Scoring pairs with the registered metrics and storing the scores.

Writes are upserts under the unique (pair, metric, signature) constraint, so a
task that runs twice, or a worker that dies half-way and is retried, repairs
rather than duplicates. LLM metrics go to queue `gpu`, the rest to `cpu`; the
queueing itself lives beside the tasks it queues, in `scoring.tasks`.
"""

import logging
import threading
from datetime import UTC, datetime
from functools import cache

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, Exists, F, OuterRef, Q
from django.utils import timezone

from campaigns.models import PEM_CONTROL_CORPUS, Campaign, Pair, Score
from campaigns.scores import signature_groups
from metrics.backends import BackendUnavailable
from metrics.base import MetricUnavailable
from metrics.registry import (
    GPU,
    METRICS,
    get_metric,
    is_per_campaign,
    metric_names,
    queue_of,
    title_of,
    uses_llm_backend,
)
from metrics.untrusted import shown
from parasol import llm_backends
from parasol.db import fetch_rows, forget_logged_queries

from .campaign_metrics import campaign_options, llm_backend_options
from .models import ScoreFailure

logger = logging.getLogger(__name__)


def enabled_metrics():
    return list(settings.PARASOL_METRICS)


def check_metric_names(names):
    """Raise ValueError naming any unknown metric."""
    unknown = [name for name in names if name not in metric_names()]
    if unknown:
        raise ValueError(f"unknown metric(s) {', '.join(unknown)}; known: {', '.join(metric_names())}")


def scorer(metric, options=()):
    """One scorer per metric (and per campaign's choices, `options`) per process: models load once, not per task.

    Built under a lock: the served worker runs batches on threads, and two first batches building at once
    would load a model twice, or race in transformers' lazy imports (ImportError of AutoTokenizer).
    """
    with _building:
        return _scorer(metric, options)


_building = threading.RLock()
scorer.cache_clear = lambda: _scorer.cache_clear()  # tests that change a metric's settings start afresh


@cache
def _scorer(metric, options):
    # A server backend's requests share one client per process, so its slots hold across batches and metrics.
    return llm_backends.share_client(get_metric(metric, **settings.METRIC_OPTIONS.get(metric, {}), **dict(options)))


def scorer_for(metric, campaign=None, backend=None):
    """The scorer of `campaign`'s pairs: a per-campaign metric (ParaTag, an LLM metric) is built from that
    campaign's own choices. `backend`: an LLM backend's name that overrides the campaign's (commands)."""
    if backend and uses_llm_backend(metric):
        return scorer(metric, llm_backend_options(metric, name=backend))
    return scorer(metric, campaign_options(metric, campaign))


def batch_size(metric):
    """Pairs per task: LLM metrics take small batches (seconds each), the others large ones (throughput)."""
    if queue_of(metric) == GPU:
        return settings.PARASOL_SCORING_BATCH_SIZE
    return settings.PARASOL_CPU_SCORING_BATCH_SIZE


def scorable_pairs():
    """Pairs the metrics score: not training pairs, not judge checks, but PEM's fixed-score controls."""
    return Pair.objects.filter(Q(is_control=False) | Q(corpus=PEM_CONTROL_CORPUS), is_training=False)


def pairs_missing(metric, signature, pair_pks=None, campaign=None):
    """Pairs without a score for this metric and signature, less those it gave up on (`ScoreFailure`).

    Only `scorable_pairs`: PEM's fixed-score controls are, as the analysis compares the metrics
    with their fixed ratings.

    A correlated NOT EXISTS is one lookup in the (pair, metric, signature) unique
    index per pair considered, so a batch costs the same however many scores exist.
    """
    pairs = scorable_pairs()
    if pair_pks is not None:
        pairs = pairs.filter(pk__in=pair_pks)
    if campaign is not None:
        pairs = pairs.filter(campaign=campaign)
    scored = Score.objects.filter(pair_id=OuterRef("pk"), metric=metric, signature=signature)
    given_up = ScoreFailure.objects.filter(
        pair_id=OuterRef("pk"), metric=metric, signature=signature, tries__gte=settings.PARASOL_SCORING_PAIR_TRIES
    )
    return pairs.filter(~Exists(scored), ~Exists(given_up))


def score_pairs(metric, pair_pks):
    """Score the given pairs that still lack this metric's current score; returns how many were stored.

    A per-campaign metric scores each campaign's pairs with that campaign's scorer and signature,
    and skips a campaign it cannot score yet (no detector of its own), as the sweep does.
    """
    if not is_per_campaign(metric):
        return _score_missing(scorer(metric), metric, pair_pks)[0]
    stored = 0
    for campaign in Campaign.objects.filter(pairs__pk__in=pair_pks).distinct().order_by("pk"):
        try:
            scored, tried = _score_missing(scorer_for(metric, campaign), metric, pair_pks, campaign)
        except BackendUnavailable as error:
            llm_backends.note_down(error, campaign=campaign.pk, metric=metric)  # this campaign's panel says so
            raise  # the task retries later: the batch waits for the server
        except MetricUnavailable as error:
            logger.info("%s does not score campaign %s: %s", metric, campaign.pk, error)
            if uses_llm_backend(metric):  # a refusal, no log-probabilities: the campaign's page says it
                llm_backends.note_failed(campaign.pk, metric, campaign.llm_backend_name(metric), error)
            continue
        if tried and uses_llm_backend(metric):  # the server answered (scores or failures of its own): not down
            llm_backends.note_answered(campaign.llm_backend_name(metric), campaign.pk, metric)
        stored += scored
    return stored


def _score_missing(metric_scorer, metric, pair_pks, campaign=None):
    """(stored, tried): how many of the pairs lacking a score were stored, and how many were tried."""
    signature = metric_scorer.signature_string()
    todo = pairs_missing(metric, signature, pair_pks, campaign).order_by("pk").values_list("pk", "source", "hypothesis")
    todo = list(todo)
    return _score_and_store(metric_scorer, metric, signature, todo), len(todo)


def _score_and_store(metric_scorer, metric, signature, rows):
    """One metric call and one bulk upsert for a batch of (pk, source, hypothesis) rows; returns how many were
    stored. A pair the metric hands back as failed is recorded (`record_failures`), the others stored."""
    if not rows:
        return 0
    values, details, failures = metric_scorer.score_each(
        sources=[row[1] for row in rows], hypotheses=[row[2] for row in rows]
    )
    kept = [i for i in range(len(rows)) if i not in failures]
    if kept:
        kept_details = [details[i] for i in kept] if details is not None else None
        store_scores(metric, signature, [rows[i][0] for i in kept], [values[i] for i in kept], kept_details)
        failed_before = ScoreFailure.objects.filter(metric=metric, signature=signature)
        if failed_before.exists():  # a pair scored at last is no longer failing
            failed_before.filter(pair_id__in=[rows[i][0] for i in kept]).delete()
    if failures:
        record_failures(metric, signature, {rows[i][0]: reason for i, reason in failures.items()})
    return len(kept)


# The reason kept for a failed pair: the start of the server's message (pages escape it).
REASON_CHARS = 500


def record_failures(metric, signature, reasons):
    """Count one more try of each pair of `reasons` ({pair pk: why}) that `metric` could not score."""
    for pair_pk, reason in reasons.items():
        reason = shown(reason, REASON_CHARS)
        failed = ScoreFailure.objects.filter(pair_id=pair_pk, metric=metric, signature=signature)
        if not failed.update(tries=F("tries") + 1, reason=reason, failed_at=timezone.now()):
            ScoreFailure.objects.bulk_create(
                [ScoreFailure(pair_id=pair_pk, metric=metric, signature=signature, reason=reason)],
                ignore_conflicts=True,  # a batch run twice at once: one row, as the score's
            )
        logger.warning("%s could not score pair %s: %s", metric, pair_pk, reason)


def recent_failures(campaign, metric, limit=5):
    """The campaign's latest pairs `metric` could not score, newest first: dicts with `pair_id` (the public
    id), `reason` (the server's message, cleaned and cut: escape it on a page), `tries`, `given_up`
    (the sweep no longer tries it) and `failed_at`; and how many of its pairs are failing or given up.

    {"failing": int, "given_up": int, "recent": [...]}: counts over every signature of the metric.
    """
    failures = ScoreFailure.objects.filter(pair__campaign=campaign, metric=metric)
    limit_tries = settings.PARASOL_SCORING_PAIR_TRIES
    counts = failures.aggregate(failing=Count("pk"), given_up=Count("pk", filter=Q(tries__gte=limit_tries)))
    rows = failures.order_by("-failed_at", "-pk").values("pair__external_id", "reason", "tries", "failed_at")[:limit]
    recent = [
        {
            "pair_id": row["pair__external_id"],
            "reason": row["reason"],
            "tries": row["tries"],
            "given_up": row["tries"] >= limit_tries,
            "failed_at": row["failed_at"],
        }
        for row in rows
    ]
    return {"failing": counts["failing"], "given_up": counts["given_up"], "recent": recent}


def forget_failures(metric=None, campaign=None):
    """Let the sweep try again the pairs given up (all, or of one metric or campaign); returns how many."""
    failures = ScoreFailure.objects.all()
    if metric:
        failures = failures.filter(metric=metric)
    if campaign is not None:
        failures = failures.filter(pair__campaign=campaign)
    return failures.delete()[0]


def backend_problem(metric, campaign):
    """Why `metric`'s backend does not answer `campaign` now, or None: this campaign's own note, never
    another campaign's on the same backend."""
    if not uses_llm_backend(metric):
        return None
    return llm_backends.why_down(campaign.llm_backend_name(metric), campaign.pk)


def campaign_failure(campaign, metric):
    """{time, backend, message, waiting} of this campaign's metric's last failure, or None (the scoring panel).

    The one place the panel reads failures from: per-pair failure records, where kept, are read here too.
    """
    if not uses_llm_backend(metric):
        return None
    failure = llm_backends.last_failure(campaign.pk, metric)
    if failure:
        failure = {**failure, "when": datetime.fromtimestamp(failure["time"], tz=UTC)}
    pairs = recent_failures(campaign, metric, limit=1)["recent"]
    if pairs and (failure is None or pairs[0]["failed_at"] > failure["when"]):
        newest = pairs[0]  # a pair the server answered badly (non-finite, no Yes/No, a refusal): its own record
        failure = {
            "time": newest["failed_at"].timestamp(),
            "when": newest["failed_at"],
            "backend": campaign.llm_backend_name(metric),
            "message": f"pair {newest['pair_id']}: {newest['reason']}"[: llm_backends.MESSAGE_CHARS],
            "waiting": False,
        }
    return failure


def store_scores(metric, signature, pair_pks, values, details=None):
    """Insert the scores in one transaction, skipping (pair, metric, signature) rows that already exist.

    Plain tuples through prepared INSERTs rather than model instances: building and
    compiling a Score per row cost several times the time `lev` takes to score it.
    ON CONFLICT DO NOTHING on the unique constraint (SQLite and PostgreSQL) keeps a
    retried batch from doubling.
    """
    created_at = connection.ops.adapt_datetimefield_value(timezone.now())
    if details:
        field = Score._meta.get_field("details")
        details = [field.get_db_prep_save(detail, connection) for detail in details]
    else:
        details = [None] * len(pair_pks)
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            _insert_sqlite(cursor, metric, signature, created_at, pair_pks, values, details)
        else:
            rows = [
                (pair_pk, metric, signature, float(value), detail, created_at)
                for pair_pk, value, detail in zip(pair_pks, values, details)
            ]
            cursor.executemany(_INSERT.format(table=Score._meta.db_table, rows="VALUES (%s, %s, %s, %s, %s, %s)"), rows)


_INSERT = (
    "INSERT INTO {table} (pair_id, metric, signature, value, details, created_at) {rows} "
    "ON CONFLICT (pair_id, metric, signature) DO NOTHING"
)


def _insert_sqlite(cursor, metric, signature, created_at, pair_pks, values, details):
    """One statement per chunk of rows, metric, signature and time bound once: a quarter less
    work for SQLite than one INSERT per row. (WHERE true: SQLite's upsert after a SELECT needs it.)"""
    per_row = 3
    chunk = max(1, (connection.features.max_query_params - 3) // per_row)
    for start in range(0, len(pair_pks), chunk):
        part = range(start, min(start + chunk, len(pair_pks)))
        select = (
            "SELECT column1, %s, %s, column2, column3, %s FROM (VALUES "
            + ", ".join(["(%s, %s, %s)"] * len(part))
            + ") WHERE true"
        )
        params = [metric, signature, created_at]
        for i in part:
            params += (pair_pks[i], float(values[i]), details[i])
        cursor.execute(_INSERT.format(table=Score._meta.db_table, rows=select), params)


def missing_batches(metric, signature, campaign, size):
    """Keyset pagination over the campaign's unscored pairs: each query starts after the last pk seen.

    The query is compiled once and run again with each page's lower bound: building it
    through the ORM for every page of 1,000 pairs cost more than reading the page.
    """
    first = -1  # no pk is negative: the one parameter that holds the lower bound
    page = pairs_missing(metric, signature, campaign=campaign).filter(pk__gt=first).order_by("pk")
    sql, params = page.values_list("pk", "source", "hypothesis")[:size].query.sql_with_params()
    params = list(params)
    if params.count(first) != 1:
        raise AssertionError(f"the page query's lower bound is not its only {first}: {params}")
    bound = params.index(first)
    while True:
        rows = fetch_rows(sql, params)
        if not rows:
            return
        yield rows
        params[bound] = rows[-1][0]


def batches(ids, size):
    ids = list(ids)
    return [ids[i : i + size] for i in range(0, len(ids), size)]


def missing_pair_pks(metric, campaign_id=None):
    """This metric's current signature and the pairs (optionally of one campaign) that lack a score with it.

    A per-campaign metric has a signature per campaign: swept over every campaign, it skips those it
    cannot score yet (no detector of their own) and returns no signature.
    """
    campaign = Campaign.objects.filter(pk=campaign_id).first() if campaign_id else None
    if campaign_id and campaign is None:
        return None, []
    if campaign is None and is_per_campaign(metric):
        missing = []
        for pk in Campaign.objects.order_by("pk").values_list("pk", flat=True):
            try:
                missing += missing_pair_pks(metric, pk)[1]
            except MetricUnavailable:
                continue
        return None, missing
    signature = scorer_for(metric, campaign).signature_string()
    return signature, list(pairs_missing(metric, signature, campaign=campaign).values_list("pk", flat=True))


def current_signatures(metric, campaign_id=None):
    """[(campaign pk or None, signature)] the sweep scores under: one signature for the deployment, or for a
    per-campaign metric one per campaign it can score (those without a detector of their own are skipped)."""
    if not is_per_campaign(metric):
        return [(campaign_id, scorer(metric).signature_string())]
    found = []
    campaigns = Campaign.objects.order_by("pk")
    for campaign in campaigns.filter(pk=campaign_id) if campaign_id else campaigns:
        try:
            found.append((campaign.pk, scorer_for(metric, campaign).signature_string()))
        except MetricUnavailable:
            continue
    return found


def score_inline(pair_pks, metrics, progress=None):
    """Score in this process, batch by batch (commands and tests without a worker)."""
    for metric in metrics:
        for batch in batches(pair_pks, batch_size(metric)):
            score_pairs(metric, batch)
            forget_logged_queries()
            if progress:
                progress(len(batch))


def score_campaign_inline(campaign, metric, progress=None):
    """Score every pair of the campaign missing this metric's current score, in this process; returns the count."""
    metric_scorer = scorer_for(metric, campaign)
    signature = metric_scorer.signature_string()
    done = 0
    for rows in missing_batches(metric, signature, campaign, batch_size(metric)):
        done += _score_and_store(metric_scorer, metric, signature, rows)
        forget_logged_queries()
        if progress:
            progress(len(rows))
    return done


def scoring_progress(campaign):
    """Per enabled metric: pairs scored under its most recent signature, out of the campaign's real pairs.

    Reads stored scores only, so the web process never loads a metric's model.
    """
    total = campaign.real_pairs.count()
    groups = signature_groups(Score.objects.filter(pair__in=campaign.real_pairs))
    rows = []
    for metric in dict.fromkeys([*enabled_metrics(), *groups]):
        scored = groups[metric][0]["n"] if metric in groups else 0
        # Nothing to score is not "done": 0 / 0 reads 0 %.
        percent = round(100 * scored / total) if total else 0
        row = {"metric": metric, "title": title_of(metric), "scored": scored, "percent": percent}
        rows.append({**row, "waiting": backend_problem(metric, campaign) if metric in METRICS else None})
    return {"total": total, "metrics": rows}

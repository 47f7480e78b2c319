"""The data version of each campaign: advanced by the database itself on every write a report reads.

Triggers (created by `reports/migrations/0001_data_version_triggers.py`, on SQLite and PostgreSQL)
advance a campaign's row of one part on every insert, update and delete of:

- `pairs`: its pairs (any column), and its campaign row (any column but `assignment_seq`, which
  every assignment bumps, and `updated_at`);
- `judgments`: judgments of its pairs, and its judges (inserted, deleted, or their exclusion,
  English level or campaign changed; also for a judge's judgments on another campaign's pairs);
- `scores_added`: scores of its pairs inserted;
- `scores_changed`: scores of its pairs updated or deleted.

No write path bypasses them (ORM, `QuerySet.update`, `bulk_create`, the admin, management commands,
raw SQL, a data migration): the cached pairs, score columns and reports are keyed on these versions.
A version moves by a random step (1 to 2**31), so a version written by a transaction that was rolled
back is not given again to other data by the next one that commits.
"""

import importlib
import random
from contextlib import contextmanager

from django.db import connection, models, transaction

from campaigns.models import Campaign

PARTS = ("pairs", "judgments", "scores_added", "scores_changed")
MAX_STEP = 2**31


class DataVersion(models.Model):
    campaign = models.ForeignKey(Campaign, related_name="data_versions", on_delete=models.CASCADE)
    part = models.CharField(max_length=20, choices=[(part, part) for part in PARTS])
    version = models.BigIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "part"], name="one_data_version_per_part")]

    def __str__(self):
        return f"{self.campaign_id}:{self.part}={self.version}"

    @classmethod
    def of(cls, campaigns, parts=PARTS) -> tuple:
        """((campaign pk, part, version), ...) of `campaigns` (in pk order) for `parts`.

        Read before the data it stands for: a write committed meanwhile gives its readers a newer version.
        A missing row (deleted by hand) is made again at a random version.
        """
        pks = sorted({campaign.pk for campaign in campaigns})
        ScoreSeal.undo_a_committed_seal()
        found = cls._read(pks, parts)
        if len(found) < len(pks) * len(parts):
            missing = [
                cls(campaign_id=pk, part=part, version=random.randrange(MAX_STEP))  # noqa: S311 - not a secret
                for pk in pks
                for part in parts
                if (pk, part) not in found
            ]
            cls.objects.bulk_create(missing, ignore_conflicts=True)
            found = cls._read(pks, parts)
        return tuple((pk, part, found.get((pk, part))) for pk in pks for part in parts)

    @classmethod
    def _read(cls, pks, parts) -> dict:
        rows = cls.objects.filter(campaign_id__in=pks, part__in=parts).values_list("campaign_id", "part", "version")
        return {(pk, part): version for pk, part, version in rows}


class ScoreSeal(models.Model):
    """SQLite only: the pair pk range whose new scores the transaction holding the seal counts itself.

    SQLite runs a trigger once per row: counting each score of a scoring batch in its campaign's version cost
    `lev`'s scoring loop a fifth of its time (a row-level trigger alone costs a fifth of an INSERT). A batch
    (`scoring.service.store_scores`, through `campaigns.data_version`) instead, inside its transaction: seals
    its pairs' pk range, advances `scores_added` of every campaign that owns a pair in the range, inserts, and
    unseals. The score INSERT trigger skips a row whose pair lies in the sealed range.

    Nothing else can pass under a seal. SQLite lets one transaction write at a time and shows other connections
    committed rows only, so no other writer ever sees a seal; and a seal is not committed: `holder` then points
    at a row that never exists (pk 0), a deferred foreign key that fails the COMMIT (Django turns SQLite's
    foreign keys on for every connection). Should one be committed all the same (foreign keys off), the next
    reader of a version finds it, clears it and advances `scores_added` of every campaign
    (`undo_a_committed_seal`), before reading any version. A seal row deleted (`flush`) is made again by the
    next batch. PostgreSQL's statement-level triggers count a batch once already: it never seals.
    """

    lo = models.BigIntegerField(null=True)
    hi = models.BigIntegerField(null=True)
    holder = models.ForeignKey("self", null=True, on_delete=models.DO_NOTHING, related_name="+")

    class Meta:
        constraints = [models.CheckConstraint(condition=models.Q(pk=1), name="one_score_seal")]

    @classmethod
    @contextmanager
    def counting(cls, pair_pks):
        """Inside the caller's transaction: the scores inserted meanwhile on `pair_pks` counted once, here."""
        if connection.vendor != "sqlite" or not pair_pks or not connection.in_atomic_block:
            yield
            return
        lo, hi = min(pair_pks), max(pair_pks)
        if hi - lo >= 2 * len(pair_pks):  # pairs scattered: scanning the range would cost more than the triggers
            yield
            return
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {cls._meta.db_table} (id, lo, hi, holder_id) VALUES (1, %s, %s, 0) "
                "ON CONFLICT (id) DO UPDATE SET lo = excluded.lo, hi = excluded.hi, holder_id = 0",
                [lo, hi],
            )
            cursor.execute(_BUMP_PAIR_RANGE, [lo, hi])
        yield
        with connection.cursor() as cursor:
            cursor.execute(f"UPDATE {cls._meta.db_table} SET lo = NULL, hi = NULL, holder_id = NULL")

    @classmethod
    def undo_a_committed_seal(cls):
        """A seal other connections can see was committed (foreign keys off): scores inserted since may have gone
        uncounted, so clear it and advance `scores_added` of every campaign. A read of one row when there is none."""
        if connection.vendor != "sqlite" or not cls.objects.filter(lo__isnull=False).exists():
            return
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"UPDATE {cls._meta.db_table} SET lo = NULL, hi = NULL, holder_id = NULL")
            if cursor.rowcount:  # another reader may have undone it meanwhile
                cursor.execute(_BUMP_EVERY_CAMPAIGN)


# The triggers' own UPDATE (one fact: their step and their table), over every campaign owning a pair in
# [lo, hi], and over every campaign.
_TRIGGERS = importlib.import_module("reports.migrations.0001_data_version_triggers")
_BUMP_PAIR_RANGE = _TRIGGERS._bump(
    "sqlite", "scores_added", "SELECT DISTINCT campaign_id FROM campaigns_pair WHERE id BETWEEN %s AND %s"
)
_BUMP_EVERY_CAMPAIGN = _TRIGGERS._bump("sqlite", "scores_added", "SELECT campaign_id FROM reports_dataversion")

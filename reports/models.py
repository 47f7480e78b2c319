"""The data version of each campaign: advanced by the database itself on every write a report reads.

Triggers (`reports.data_version`, on SQLite and PostgreSQL) advance a campaign's row of one part on every
insert, update and delete of:

- `pairs`: its pairs (any column), and its campaign row (any column but `assignment_seq`, which
  every assignment bumps, and `updated_at`);
- `judgments`: judgments of its pairs, and its judges (inserted, deleted, or their exclusion,
  English level or campaign changed; also for a judge's judgments on another campaign's pairs);
- `scores_added`: scores of its pairs inserted;
- `scores_changed`: scores of its pairs updated or deleted (a SQLite REPLACE deletes then inserts; a
  PostgreSQL TRUNCATE advances the part it empties in every campaign).

No write path bypasses them (ORM, `QuerySet.update`, `bulk_create`, the admin, management commands,
raw SQL, a data migration): the cached pairs, score columns and reports are keyed on these versions.
A version moves by a random step (1 to 2**31), so a version written by a transaction that was rolled
back is not given again to other data by the next one that commits.
"""

import random

from django.db import models

from campaigns.models import Campaign

from .data_version import PARTS

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

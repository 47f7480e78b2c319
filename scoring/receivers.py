from django.conf import settings

from . import tasks


def score_new_pairs(sender, campaign, pair_pks, **kwargs):
    """New pairs are scored as soon as they are committed."""
    if settings.PARASOL_SCORE_ON_CREATE:
        tasks.queue_scoring(pair_pks, campaign_pk=campaign.pk)

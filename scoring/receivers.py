from django.conf import settings

from . import service


def score_new_pairs(sender, campaign, pair_ids, **kwargs):
    """New pairs are scored as soon as they are committed."""
    if settings.PARASOL_SCORE_ON_CREATE:
        service.queue_scoring(pair_ids)

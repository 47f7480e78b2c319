"""Reading stored scores: the one reader every app uses (reports' frames and exports, scoring's sweep and
progress, generation's selection through `latest_scores`).

A metric's scores are grouped by signature; the group a table uses is the newest (the highest score id:
`signature_groups`, the one place that rule is written), never mixed with another. A campaign's pairs lie in a pk range
(an import allocates them in a row): reading a column over the range reads the covering index alone.
"""

from django.db.models import Count, Max

from metrics.registry import metric_names
from parasol.db import raw_rows

from .models import Score


def signature_groups(scores):
    """Per metric, in registry order, its signatures newest first: dicts with `signature`, `latest`, `n`.

    The first group of each metric is the one tables use; the others are
    never mixed in (a change of model or template starts a new signature).
    Newest is by the highest id (ids grow with insertion): unlike `created_at`,
    the id sits in the unique index, so the count reads the index alone.
    """
    groups = {}
    rows = scores.values("metric", "signature").annotate(latest=Max("id"), n=Count("id")).order_by("-latest")
    for group in rows:
        groups.setdefault(group["metric"], []).append(group)
    return _in_registry_order(groups)


def _in_registry_order(groups):
    """Groups by metric in registry order, unregistered names last by name."""
    order = {name: i for i, name in enumerate(metric_names())}
    return dict(sorted(groups.items(), key=lambda item: (order.get(item[0], len(order)), item[0])))


def scored_signatures():
    """Every (metric, signature) that has a score, walked along the covering index: a few tiny queries, no scan."""
    found = []
    scores = Score.objects.order_by()
    metric = scores.order_by("metric").values_list("metric", flat=True).first()
    while metric is not None:
        signature = scores.filter(metric=metric).order_by("signature").values_list("signature", flat=True).first()
        while signature is not None:
            found.append((metric, signature))
            later = scores.filter(metric=metric, signature__gt=signature).order_by("signature")
            signature = later.values_list("signature", flat=True).first()
        metric = scores.filter(metric__gt=metric).order_by("metric").values_list("metric", flat=True).first()
    return found


def _in_pk_range(metric, signature, pk_range):
    """The scores of (metric, signature) on a pk range: pks in (after, last], less the `excluded` ones."""
    after, last, excluded = pk_range
    scores = Score.objects.order_by().filter(metric=metric, signature=signature, pair_id__gt=after, pair_id__lte=last)
    return scores.exclude(pair_id__in=excluded) if excluded else scores


def signature_groups_in(pk_range, counted=None):
    """`signature_groups` of the scores on a pk range, each group's count and newest id read from the index alone.

    `pk_range`: (after, last, excluded pks): the pairs of one or more campaigns, when their pks lie
    close together (an import allocates them in a row). Same groups, same order as
    `signature_groups` of those pairs' scores, at a fraction of its cost on a large campaign.
    `counted(function, arguments)`: runs `function(*arguments)` for each of `arguments`, in order
    (the `report` command's workers count several signatures at once); default: here, in turn.
    """
    signatures = scored_signatures()
    counted = counted or (lambda function, arguments: [function(*each) for each in arguments])
    groups = {}
    for (metric, signature), found in zip(signatures, counted(group_in, [(m, s, pk_range) for m, s in signatures])):
        if found["n"]:
            groups.setdefault(metric, []).append({"metric": metric, "signature": signature, **found})
    for found in groups.values():
        found.sort(key=lambda group: -group["latest"])
    return _in_registry_order(groups)


def group_in(metric, signature, pk_range) -> dict:
    """{latest, n}: the newest score id and the count of (metric, signature) on a pk range."""
    return _in_pk_range(metric, signature, pk_range).aggregate(latest=Max("id"), n=Count("id"))


def values_in(pk_range, metric, signature, newer_than=0):
    """[(pair_pk, value), ...] of (metric, signature) on a pk range, read from the covering index alone.

    `newer_than`: only the scores with a higher id (those stored since a cached column was read).
    """
    scores = _in_pk_range(metric, signature, pk_range)
    if newer_than:
        scores = scores.filter(id__gt=newer_than)
    return raw_rows(scores.values_list("pair_id", "value"))


def values_by_pair(pk_range, metric, signature):
    """[(value,), ...] of (metric, signature) on a pk range in pair order: when every pair of the range
    has a score, the pks are the range's and need not be read (a quarter of the reading time)."""
    return raw_rows(_in_pk_range(metric, signature, pk_range).order_by("pair_id").values_list("value"))


def latest_signatures(scores):
    """The signature each metric's tables use: its most recent one."""
    return {metric: groups[0]["signature"] for metric, groups in signature_groups(scores).items()}


def latest_scores(metric, pair_pks) -> dict:
    """{pair pk: value} of `metric` on these pairs under the newest signature among them (never mixed)."""
    scores = Score.objects.filter(pair_id__in=pair_pks, metric=metric)
    newest = latest_signatures(scores).get(metric)
    return {} if newest is None else dict(scores.filter(signature=newest).values_list("pair_id", "value"))


def values_under(scores, signatures):
    """Per metric of `signatures` (metric -> signature): [(pair_pk, value), ...] of its scores under that signature.

    One query per metric read straight from the cursor: a 400,000-pair column
    costs a fraction of the ORM's row-by-row conversion (ids and floats need none).
    """
    columns = {}
    for metric, signature in signatures.items():
        # No ordering: the model's default would sort rows nobody reads in order.
        columns[metric] = raw_rows(
            scores.filter(metric=metric, signature=signature).order_by().values_list("pair_id", "value")
        )
    return columns


def latest_details(scores, signatures=None):
    """(pair_pk, metric, details) under each metric's signature (default: its most recent), where kept."""
    rows = []
    for metric, signature in (signatures or latest_signatures(scores)).items():
        kept = scores.filter(metric=metric, signature=signature, details__isnull=False).order_by()
        rows += kept.values_list("pair_id", "metric", "details")
    return rows


def signature_lines(signatures):
    """`metric<TAB>signature` lines, published beside exported scores."""
    return "".join(f"{metric}\t{signature}\n" for metric, signature in sorted(signatures.items()))

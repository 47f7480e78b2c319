"""The live report stays exact whatever writes the data (issue 36 §2): a stateful property test.

Hypothesis drives random sequences of writes through every path a deployment has (ORM save,
`QuerySet.update`, `bulk_create`, the admin's change view and bulk action, the API, the researcher's
page, management commands, raw SQL); after each, the report the live page serves (`get_report`: the
cache, its pairs, columns and steps) equals one computed from scratch, tables and notes, against the
judges' and the gold labels. Bounded (a few examples of a few steps): it runs in seconds per database.
"""

import itertools
import json
import random

import pytest
from django.core.management import call_command
from django.db import connection
from django.urls import reverse
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Assignment, Judge, Judgment
from campaigns.models import Campaign, Pair, Score
from reports import cache as report_cache
from tests.factories import make_judge, without_controls
from tests.reports.test_incremental_report import ANSWERS, full, table_bytes

SLUGS = itertools.count()
METRICS = ("sbert", "bertscore")


def _sql(statement, params):
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def _pair(campaign, i, rng):
    return Pair.build(
        campaign,
        external_id=f"x{i}",
        corpus="qqp" if i % 2 else "paws",
        source=f"The cat number {i} sat on the mat.",
        hypothesis=f"A cat {'sat' if i % 3 else 'slept'} on mat {i % 5}.",
        gold_label=rng.choice([0, 1]),
        metadata={"generator": f"g{i % 2}"},
    )


class LiveReport(RuleBasedStateMachine):
    """One campaign per example: pairs with gold labels, three judges, two metrics; then random writes."""

    researcher = None  # set by the test: the campaign's owner (a superuser: the admin is open to them)

    @initialize(seed=st.integers(0, 2**16))
    def make_campaign(self, seed):
        self.rng = random.Random(seed)
        self.campaign = without_controls(
            Campaign.objects.create(slug=f"live-{next(SLUGS)}", name="Live", created_by=self.researcher)
        )
        pairs = Pair.objects.bulk_create(_pair(self.campaign, i, self.rng) for i in range(12))
        for _ in range(3):
            judge = make_judge(self.campaign)
            for position, pair in enumerate(pairs, start=1):
                self._judge(judge, pair, position)
        for metric in METRICS:
            Score.objects.bulk_create(
                Score(pair=p, metric=metric, signature=f"metric:{metric}|t", value=round(self.rng.random(), 1))
                for p in pairs
            )
        self.next_id = len(pairs)

    def _judge(self, judge, pair, position):
        assignment = Assignment.objects.create(judge=judge, pair=pair, position=position, top="source")
        Judgment.objects.create(
            assignment=assignment, judge=judge, pair=pair, values={"answer": self.rng.choice(ANSWERS)}
        )

    def _real_pairs(self):
        return list(self.campaign.real_pairs.order_by("pk"))

    def _some_pair(self, index):
        pairs = self._real_pairs()
        return pairs[index % len(pairs)]

    # The write paths.

    @rule(index=st.integers(0, 100))
    def orm_save(self, index):
        pair = self._some_pair(index)
        pair.gold_label = 1 - (pair.gold_label or 0)
        pair.save()

    @rule(first=st.integers(0, 100), second=st.integers(0, 100))
    def gold_swap_by_queryset_update(self, first, second):
        one, other = self._some_pair(first), self._some_pair(second)
        Pair.objects.filter(pk=one.pk).update(gold_label=other.gold_label)
        Pair.objects.filter(pk=other.pk).update(gold_label=one.gold_label)

    @rule(index=st.integers(0, 100))
    def judgments_by_bulk_create(self, index):
        judge = make_judge(self.campaign)
        pairs = self._real_pairs()[index % 4 :][:5]
        assignments = Assignment.objects.bulk_create(
            Assignment(judge=judge, pair=pair, position=position, top="source")
            for position, pair in enumerate(pairs, start=1)
        )
        Judgment.objects.bulk_create(
            Judgment(assignment=a, judge=judge, pair=a.pair, values={"answer": self.rng.choice(ANSWERS)})
            for a in assignments
        )

    @rule(index=st.integers(0, 100))
    def admin_change_view(self, index):
        """The admin's pair form, posted as the page sends it, with the gold label turned."""
        pair = self._some_pair(index)
        client = self._client()
        url = reverse("admin:campaigns_pair_change", args=[pair.pk])
        form = client.get(url).context["adminform"].form
        data = {field.html_name: field.value() for field in form}
        data = {name: value for name, value in data.items() if value is not None and value is not False}
        data["gold_label"] = str(1 - (pair.gold_label or 0))
        response = client.post(url, data)
        assert response.status_code == 302, (data, response.context["adminform"].form.errors)

    def _unseen_pairs(self):
        """Pairs no judge was assigned: the admin deletes those (judgments are evidence it never deletes)."""
        return self.campaign.real_pairs.filter(assignments__isnull=True).order_by("pk")

    @precondition(lambda self: self._unseen_pairs().exists())
    @rule()
    def admin_bulk_delete(self):
        """The admin's bulk action deletes the pairs no judge saw (with their scores)."""
        chosen = list(self._unseen_pairs().values_list("pk", flat=True)[:2])
        response = self._client().post(
            reverse("admin:campaigns_pair_changelist"),
            {"action": "delete_selected", "_selected_action": chosen, "post": "yes"},
        )
        assert response.status_code == 302
        assert not Pair.objects.filter(pk__in=chosen).exists()

    @rule(labelled=st.booleans())
    def api_adds_pairs(self, labelled):
        client = APIClient()
        token, _ = Token.objects.get_or_create(user=self.researcher)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        rows = [
            {"id": f"api{self.next_id + i}", "source": f"An api source {i}.", "hypothesis": f"An api hypothesis {i}."}
            | ({"label": str(self.rng.choice([0, 1]))} if labelled else {})
            for i in range(2)
        ]
        self.next_id += 2
        response = client.post(f"/api/campaigns/{self.campaign.slug}/pairs/", rows, format="json")
        assert response.status_code == 201, response.content

    @rule(keys=st.sampled_from(["generator", "", "template"]))
    def api_changes_the_system_keys(self, keys):
        client = APIClient()
        token, _ = Token.objects.get_or_create(user=self.researcher)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        response = client.patch(f"/api/campaigns/{self.campaign.slug}/", {"system_keys": keys}, format="json")
        assert response.status_code == 200, response.content

    @rule()
    def researcher_page_excludes_a_judge(self):
        judge = Judge.objects.filter(campaign=self.campaign).order_by("?").first()
        url = reverse("annotation-toggle-judge-exclusion", args=[self.campaign.slug, judge.pk])
        assert self._client().post(url).status_code == 302

    @rule()
    def management_command_scores(self):
        call_command("score", self.campaign.slug, "--metrics", "lev", "--inline", verbosity=0)

    @rule(index=st.integers(0, 100), value=st.sampled_from([0.0, 0.3, 0.9]))
    def raw_sql_changes_a_score(self, index, value):
        pair = self._some_pair(index)
        _sql("UPDATE scoring_score SET value = %s WHERE pair_id = %s AND metric = %s", [value, pair.pk, "sbert"])

    @rule(index=st.integers(0, 100))
    def raw_sql_swaps_an_answer(self, index):
        judgment = Judgment.objects.filter(pair__campaign=self.campaign).order_by("pk")[index % 10]
        answer = json.dumps({"answer": self.rng.choice(ANSWERS)})
        _sql('UPDATE annotation_judgment SET "values" = %s WHERE id = %s', [answer, judgment.pk])

    def _client(self):
        from django.test import Client

        client = Client()
        client.force_login(self.researcher)
        return client

    @invariant()
    def the_live_report_equals_a_scratch_one(self):
        for label_source in ("human", "gold"):
            live = report_cache.get_report([self.campaign], label_source).report
            scratch = full(self.campaign, label_source)
            assert table_bytes(live) == table_bytes(scratch), label_source
            assert live.notes == scratch.notes, label_source


@pytest.mark.django_db(transaction=False)
def test_the_live_report_equals_a_scratch_one_after_any_write(django_user_model, settings):
    settings.PARASOL_REPORT_INLINE_MAX_PAIRS = 10_000
    LiveReport.researcher = django_user_model.objects.create_superuser("owner", password="pw-owner-123")
    run_state_machine_as_test(LiveReport, settings=BOUNDED)


# A few short sequences: each step computes four reports (live and scratch, two label sources).
BOUNDED = hypothesis_settings(
    max_examples=4,
    stateful_step_count=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@pytest.mark.django_db
def test_every_write_path_once_in_turn(django_user_model, settings):
    """Each rule once, in order (random sequences may leave a path out in a run): the invariant after each."""
    settings.PARASOL_REPORT_INLINE_MAX_PAIRS = 10_000
    LiveReport.researcher = django_user_model.objects.create_superuser("owner", password="pw-owner-123")
    machine = LiveReport()
    machine.make_campaign(seed=36)
    writes = [
        lambda: machine.orm_save(index=1),
        lambda: machine.gold_swap_by_queryset_update(first=2, second=3),
        lambda: machine.judgments_by_bulk_create(index=1),
        lambda: machine.admin_change_view(index=4),
        lambda: machine.api_adds_pairs(labelled=True),
        lambda: machine.admin_bulk_delete(),
        lambda: machine.api_changes_the_system_keys(keys="generator"),
        machine.researcher_page_excludes_a_judge,
        machine.management_command_scores,
        lambda: machine.raw_sql_changes_a_score(index=5, value=0.9),
        lambda: machine.raw_sql_swaps_an_answer(index=7),
    ]
    machine.the_live_report_equals_a_scratch_one()
    for write in writes:
        write()
        machine.the_live_report_equals_a_scratch_one()

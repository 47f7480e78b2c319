"""The join limit and reservations cannot lock judges out (live server)."""

from datetime import timedelta

import pytest
import requests
from django.utils import timezone

from annotation.assignment import next_assignment, open_pairs, record_judgment
from annotation.controls import protocol_of
from annotation.models import Assignment, Judge
from tests.factories import add_pairs, make_judge, without_controls
from tests.system.conftest import post_form

pytestmark = pytest.mark.django_db(transaction=True)


def join(base, slug="demo", forwarded_for=None):
    session = requests.Session()
    if forwarded_for:
        session.headers["X-Forwarded-For"] = forwarded_for
    response = post_form(session, f"{base}/j/{slug}/", {"consent": "yes"})
    return session, response


@pytest.fixture
def small(campaign, settings):
    settings.PARASOL_JOINS_PER_HOUR = 3
    # Enough pairs that every joiner gets their first ones reserved: the limit, not exhaustion, stops the 4th.
    add_pairs(campaign, 20)
    return without_controls(campaign)


def test_behind_a_declared_proxy_each_client_has_its_own_join_limit(live_server, small, settings):
    settings.PARASOL_TRUSTED_PROXIES = 1
    statuses = [join(live_server.url, forwarded_for="203.0.113.7")[1].status_code for _ in range(4)]
    assert statuses == [302, 302, 302, 429]
    # Another judge behind the same proxy is not counted with the first one.
    assert join(live_server.url, forwarded_for="198.51.100.2")[1].status_code == 302
    # Addresses the client prepends are not believed: only the proxy's own entry counts.
    forged = join(live_server.url, forwarded_for="10.9.9.9, 203.0.113.7")[1]
    assert forged.status_code == 429


def test_without_a_declared_proxy_a_forged_header_does_not_reset_the_limit(live_server, small):
    statuses = [join(live_server.url, forwarded_for=f"192.0.2.{i}")[1].status_code for i in range(4)]
    assert statuses == [302, 302, 302, 429]
    assert Judge.objects.count() == 3


def test_idle_joiners_cannot_keep_a_campaign_full(live_server, campaign):
    add_pairs(campaign, 2)
    without_controls(campaign)
    # Each joiner reserves one pair before training, so the two bots fill the cap, not the pairs.
    campaign.overlap_target = 1
    campaign.pairs_per_judge = 1
    campaign.save()
    protocol = protocol_of(campaign)
    protocol.max_judges = 2
    protocol.save()
    bots = [join(live_server.url)[0] for _ in range(2)]
    assert len(bots) == Judge.objects.count() == 2
    page = requests.get(f"{live_server.url}/j/demo/")
    assert "all the judges it needs" in page.text
    # Time passes (the short idle period) without the bots answering anything.
    long_ago = timezone.now() - timedelta(minutes=11)
    Judge.objects.update(created_at=long_ago)
    Assignment.objects.update(assigned_at=long_ago)
    session, response = join(live_server.url)
    assert response.status_code == 302


def test_an_idle_reservation_expires_sooner_than_a_working_judges(live_server, campaign, settings):
    """One pair, one judgment wanted: an idle joiner's reservation holds it only for the idle period."""
    add_pairs(campaign, 1)
    without_controls(campaign)
    campaign.overlap_target = 1
    campaign.save()
    bot = make_judge(campaign)
    for _ in range(6):  # five training answers, then the real pair is reserved
        current = next_assignment(bot)
        if not current.is_training:
            break
        record_judgment(current, {"answer": "same_meaning"})
    assert not open_pairs(campaign).exists()
    Assignment.objects.filter(judge=bot, is_training=False).update(
        assigned_at=timezone.now() - timedelta(minutes=settings.PARASOL_IDLE_RESERVATION_MINUTES + 1)
    )
    assert open_pairs(campaign).exists()
    assert join(live_server.url)[1].status_code == 302

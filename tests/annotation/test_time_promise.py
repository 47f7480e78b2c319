"""The welcome page's time promise: learnt only from answers a judge can trust."""

from annotation.joining import what_to_expect
from annotation.models import Judgment
from annotation.stats import MIN_TIMED_ANSWERS, TYPE_FLOOR_SHARE, answer_seconds
from campaigns.models import Campaign
from campaigns.task_types import get_task_type
from tests.factories import add_pairs, make_judge, without_controls

DEFAULT = get_task_type("similarity").default_answer_seconds
N_PAIRS = 40  # above MIN_TIMED_ANSWERS, so one judge can time enough answers alone


def a_campaign(slug, researcher):
    # Enough judges per pair that the answers below leave every pair open to a new judge.
    campaign = Campaign.objects.create(
        slug=slug, name=slug, created_by=researcher, pairs_per_judge=20, overlap_target=10, overlap_max=10
    )
    add_pairs(campaign, N_PAIRS)
    without_controls(campaign)
    return campaign


def answers(campaign, *, ms, n=N_PAIRS, excluded=False):
    """One judge answering n real pairs in `ms` each, as everyone else answers (no disagreement flag)."""
    judge = make_judge(campaign)
    judge.excluded = excluded
    judge.save()
    for position, pair in enumerate(campaign.real_pairs[:n]):
        assignment = judge.assignments.create(pair=pair, position=position, top="source")
        Judgment.objects.create(
            assignment=assignment, judge=judge, pair=pair, values={"answer": "same_meaning"}, response_ms=ms
        )
    return judge


def minutes_at(seconds):
    return -(-25 * seconds // 60)  # 5 training pairs + 20 real, rounded up


def test_it_promises_the_protocols_estimate_before_any_answer(campaign):
    add_pairs(campaign, N_PAIRS)
    campaign.pairs_per_judge = 20
    campaign.save()
    without_controls(campaign)
    assert answer_seconds(campaign) == (DEFAULT, "protocol")
    assert what_to_expect(campaign)["minutes"] == minutes_at(DEFAULT)


def test_robot_answers_do_not_move_the_promise(researcher):
    campaign = a_campaign("robots", researcher)
    elsewhere = a_campaign("robots-elsewhere", researcher)
    before = what_to_expect(campaign)
    for _ in range(3):
        answers(campaign, ms=300)  # flagged: median answer under a second
        answers(elsewhere, ms=300)
    assert answer_seconds(campaign) == (DEFAULT, "protocol")
    assert what_to_expect(campaign) == before
    assert before["minutes"] == minutes_at(DEFAULT)


def test_excluded_judges_do_not_move_the_promise(researcher):
    campaign = a_campaign("excluded", researcher)
    answers(campaign, ms=60_000, excluded=True)
    assert answer_seconds(campaign) == (DEFAULT, "protocol")


def test_the_campaigns_trusted_judges_set_the_promise_beside_robots(researcher):
    campaign = a_campaign("mixed", researcher)
    for _ in range(3):
        answers(campaign, ms=300)
    answers(campaign, ms=12_000)
    assert answer_seconds(campaign) == (12.0, "campaign")
    assert what_to_expect(campaign)["minutes"] == 5  # 25 pairs at 12 s


def test_other_campaigns_of_the_type_count_above_a_floor(researcher):
    campaign = a_campaign("new", researcher)
    elsewhere = a_campaign("older", researcher)
    answers(elsewhere, ms=8_000, n=MIN_TIMED_ANSWERS)
    assert answer_seconds(campaign) == (8.0, "task type")
    answers(elsewhere, ms=1_500, n=N_PAIRS)  # a fast person, not flagged: the median drops under the floor
    assert answer_seconds(campaign) == (TYPE_FLOOR_SHARE * DEFAULT, "task type")

"""A hostile LLM server, mode by mode (tests/hostile_llm.py): no request held past its deadline, nothing
non-finite or unclean stored, the failure recorded for the campaign it concerns, pages and exports whole."""

import json
import math
import time

import pytest
from django.db import IntegrityError, transaction
from django.urls import reverse

from campaigns.exports import FAILED_EXPORT_LINE, guarded_chunks
from campaigns.models import Campaign, Score
from generation import llm
from metrics.backends import BackendUnavailable, ServerClient, parse_backends
from metrics.base import Metric, PairFailed, ScoresFailed
from parasol.llm_backends import MESSAGE_CHARS
from scoring import service
from scoring.models import ScoreFailure
from tests.factories import add_pairs
from tests.hostile_llm import BIG_BYTES, MODES, REFUSAL, HostileLLM

TIMEOUT = 1.5  # the backend's timeout: a request's whole wall clock
# What a loaded machine may add to a deadline (scheduling, the server's own thread); far under a drip's length.
SLACK = 1.5
WAITS = ("drip", "hang", "500", "429")  # the server may answer later: the batch waits
SCORED = ("ok", "nul")
FAILED = tuple(mode for mode in MODES if mode not in WAITS + SCORED)  # that pair fails, with why


def declared(url, **options):
    return {"base_url": url, "model": "smollm2", "timeout": TIMEOUT, "retries": 0, "backoff": 0, **options}


@pytest.fixture(scope="module")
def hostile():
    with HostileLLM(drip_seconds=0.3) as server:
        yield server


@pytest.fixture
def lab(hostile, settings):
    """Backend `lab` on the hostile server, in `ok` mode until a test says otherwise; fresh scorers."""
    hostile.mode, hostile.per_marker = "ok", {}
    settings.PARASOL_LLM_BACKENDS = parse_backends(json.dumps({"lab": declared(hostile.url)}))
    settings.PARASOL_SCORING_PAIR_TRIES = 2
    service.scorer.cache_clear()
    yield settings.PARASOL_LLM_BACKENDS["lab"]
    service.scorer.cache_clear()


def client_for(backend):
    return ServerClient(backend)


# The client alone.


@pytest.mark.parametrize("mode", WAITS)
def test_a_server_that_does_not_answer_in_time_is_unavailable_by_its_deadline(hostile, lab, mode):
    hostile.mode = mode
    start = time.monotonic()
    with pytest.raises(BackendUnavailable, match="'lab' is unreachable"):
        client_for(lab).completion("Hello", max_tokens=1)
    assert time.monotonic() - start < lab.request_deadline_seconds + SLACK


def test_a_dripping_server_cannot_hold_a_request_past_its_timeout(hostile, lab):
    """The holdout check: 200, then a byte every 0.3 s (each read well within any read timeout)."""
    hostile.mode = "drip"
    start = time.monotonic()
    with pytest.raises(BackendUnavailable):
        client_for(lab).completion("Hello", max_tokens=1)
    took = time.monotonic() - start
    assert lab.request_deadline_seconds - 0.1 <= took < lab.request_deadline_seconds + SLACK
    assert lab.completion_deadline_seconds == lab.request_deadline_seconds  # no retries, no backoff


@pytest.mark.parametrize("mode", FAILED)
def test_an_unusable_answer_fails_that_request_with_why(hostile, lab, mode):
    hostile.mode = mode
    if mode == "missing":  # a well-formed answer: only ParaPLUIE finds Yes/No missing (below)
        assert client_for(lab).completion("Hello", max_tokens=1)["text"] == " Maybe"
        return
    with pytest.raises(PairFailed, match="'lab'"):
        client_for(lab).completion("Hello", max_tokens=1)


def test_a_10_mb_answer_is_refused_at_the_byte_cap(hostile, lab, settings):
    hostile.mode = "big"
    small = parse_backends(json.dumps({"lab": declared(hostile.url)}), max_answer_bytes=4096)["lab"]
    with pytest.raises(PairFailed, match="over 4,096 bytes"):
        client_for(small).completion("Hello", max_tokens=1)
    assert lab.max_answer_bytes < BIG_BYTES  # the default cap refuses it too (test above)


def test_text_with_nul_and_lone_surrogates_comes_back_clean_and_cut(hostile, lab):
    hostile.mode = "nul"
    text = client_for(lab).completion("Hello", max_tokens=1)["text"]
    assert "\x00" not in text and "\x1b" not in text and text.encode("utf-8")
    assert text.startswith(" Yes") and text.endswith("same")
    short = parse_backends(json.dumps({"lab": declared(hostile.url)}), max_text_chars=6)["lab"]
    assert client_for(short).completion("Hello", max_tokens=1)["text"] == " Yes\ufffd…"


def test_a_refusal_says_the_servers_message_cut():
    with HostileLLM("refuse") as server:
        backend = parse_backends(json.dumps({"lab": declared(server.url)}))["lab"]
        with pytest.raises(PairFailed, match="HTTP 400") as refused:
            ServerClient(backend).completion("Hello", max_tokens=1)
    assert REFUSAL in str(refused.value) and len(str(refused.value)) < 400


# The database and the metrics' one entry point.


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_the_database_refuses_a_non_finite_score(campaign, value):
    pair = add_pairs(campaign, 1)[0]
    with pytest.raises(IntegrityError), transaction.atomic():
        Score.objects.create(pair=pair, metric="lev", signature="s", value=value)
    Score.objects.create(pair=pair, metric="lev", signature="s", value=-1.5e308)  # finite: kept


class Wobbly(Metric):
    """Hands back a NaN, an infinity and a failure among good scores."""

    def _score_batch(self, sources, hypotheses):
        table = {"nan": math.nan, "inf": math.inf, "fail": PairFailed("the server refused this one")}
        return [table.get(hypothesis, 0.5) for hypothesis in hypotheses]


Wobbly.name = "wobbly"


def test_every_score_is_checked_where_a_metric_hands_it_back():
    scores, _details, failures = Wobbly().score_each(sources=["a"] * 4, hypotheses=["ok", "nan", "inf", "fail"])
    assert scores == [0.5, None, None, None]
    assert sorted(failures) == [1, 2, 3] and "not finite" in failures[1] and "refused" in failures[3]
    with pytest.raises(ScoresFailed, match="1 pair"):
        Wobbly().score(sources=["a", "a"], hypotheses=["ok", "nan"])


# ParaPLUIE through the hostile server, on a campaign.


def score(campaign, pairs):
    return service.score_pairs("parapluie_direct", [pair.pk for pair in pairs])


def assert_pages_and_export_whole(client, researcher, campaign, n_pairs):
    client.force_login(researcher)
    for name in ("scoring-show-progress", "annotation-show-campaign"):
        assert client.get(reverse(name, args=[campaign.slug])).status_code == 200
    response = client.get(reverse("reports-export-pairs", args=[campaign.slug]))
    text = b"".join(response.streaming_content).decode()
    assert response.status_code == 200 and FAILED_EXPORT_LINE not in text
    assert len(text.strip().split("\r\n")) == 1 + n_pairs
    assert "inf" not in text.lower().replace("info", "") and "nan" not in text.lower()


@pytest.mark.parametrize("mode", MODES)
def test_each_mode_stores_only_finite_clean_scores_and_says_why_on_the_campaign(
    hostile, lab, campaign, client, researcher, mode
):
    campaign.choose_llm_backends({"parapluie_direct": "lab"})
    pairs = add_pairs(campaign, 2)
    hostile.mode = mode
    service.scorer_for("parapluie_direct", campaign)  # its tokenizer loaded before the clock starts
    start = time.monotonic()
    if mode in WAITS:
        with pytest.raises(BackendUnavailable):
            score(campaign, pairs)
        assert not Score.objects.exists() and not ScoreFailure.objects.exists()
        assert "unreachable" in service.backend_problem("parapluie_direct", campaign)
    else:
        stored = score(campaign, pairs)
        assert stored == (2 if mode in SCORED else 0)
        failures = service.recent_failures(campaign, "parapluie_direct")
        assert failures["failing"] == (0 if mode in SCORED else 2)
        if mode in FAILED:
            assert all(row["reason"] and not row["given_up"] for row in failures["recent"])
    # Each pair's requests (ParaPLUIE asks up to three times), one after another at most.
    assert time.monotonic() - start < 2 * 3 * (lab.request_deadline_seconds + SLACK)
    assert all(math.isfinite(value) for value in Score.objects.values_list("value", flat=True))
    assert_pages_and_export_whole(client, researcher, campaign, 2)


@pytest.mark.parametrize("mode", FAILED)
def test_the_sweep_gives_up_on_a_pair_after_its_tries_and_says_why(hostile, lab, campaign, mode):
    campaign.choose_llm_backends({"parapluie_direct": "lab"})
    pairs = add_pairs(campaign, 2)
    hostile.mode = mode
    signature = service.scorer_for("parapluie_direct", campaign).signature_string()
    for _ in range(2):  # PARASOL_SCORING_PAIR_TRIES
        assert service.pairs_missing("parapluie_direct", signature, campaign=campaign).count() == 2
        score(campaign, pairs)
    assert not service.pairs_missing("parapluie_direct", signature, campaign=campaign).exists()
    failures = service.recent_failures(campaign, "parapluie_direct")
    assert failures["given_up"] == 2 and all(row["given_up"] and row["tries"] == 2 for row in failures["recent"])
    requests = hostile.requests
    assert score(campaign, pairs) == 0 and hostile.requests == requests  # given up: no request sent
    assert service.forget_failures("parapluie_direct", campaign) == 2
    assert service.pairs_missing("parapluie_direct", signature, campaign=campaign).count() == 2


def test_one_bad_pair_fails_that_pair_only(hostile, lab, campaign):
    campaign.choose_llm_backends({"parapluie_direct": "lab"})
    pairs = add_pairs(campaign, 3)
    pairs[1].hypothesis = "POISON"
    pairs[1].save()
    hostile.per_marker = {"POISON": "nan"}
    assert score(campaign, pairs) == 2
    assert set(Score.objects.values_list("pair__external_id", flat=True)) == {"p1", "p3"}
    (failure,) = service.recent_failures(campaign, "parapluie_direct")["recent"]
    assert failure["pair_id"] == "p2" and "NaN" in failure["reason"]
    hostile.per_marker = {}
    assert score(campaign, pairs) == 1  # it answers now: scored, and no longer failing
    assert service.recent_failures(campaign, "parapluie_direct")["failing"] == 0


def test_a_campaign_never_shows_another_campaigns_backend_failure(hostile, lab, campaign, researcher):
    other = Campaign.objects.create(slug="other", name="Other", created_by=researcher)
    for each in (campaign, other):
        each.choose_llm_backends({"parapluie_direct": "lab"})
    hostile.mode = "500"
    with pytest.raises(BackendUnavailable):
        score(campaign, add_pairs(campaign, 1))
    assert "HTTP 500" in service.backend_problem("parapluie_direct", campaign)
    assert service.backend_problem("parapluie_direct", other) is None
    hostile.mode = "ok"
    assert score(campaign, campaign.pairs.all()) == 1
    assert service.backend_problem("parapluie_direct", campaign) is None


def test_the_refusal_is_shown_escaped_on_the_campaigns_panel_data(hostile, lab, campaign):
    campaign.choose_llm_backends({"parapluie_direct": "lab"})
    hostile.mode = "refuse"
    score(campaign, add_pairs(campaign, 1))
    (failure,) = service.recent_failures(campaign, "parapluie_direct")["recent"]
    assert "HTTP 400" in failure["reason"] and REFUSAL in failure["reason"] and len(failure["reason"]) <= 500


# The LLM judge and generation through the same client.


def test_the_judges_replies_are_stored_clean(hostile, lab, campaign, monkeypatch):
    monkeypatch.setenv("LLM_VOTE_K", "1")
    service.scorer.cache_clear()
    campaign.choose_llm_backends({"llm_vote": "lab"})
    hostile.mode = "nul"
    assert service.score_pairs("llm_vote", [pair.pk for pair in add_pairs(campaign, 2)]) == 2
    for details in Score.objects.values_list("details", flat=True):
        stored = json.dumps(details, ensure_ascii=False)
        assert "\\u0000" not in stored and "\x00" not in stored and stored.encode("utf-8")


def test_a_bad_generation_candidate_fails_that_candidate_only(hostile, lab):
    hostile.mode = "refuse"
    generator = llm.ServerGenerator("lab")
    decoding = {"strategy": "sampling", "max_new_tokens": 8, "temperature": 0.7, "top_p": 0.9}
    ((first, second),) = generator.generate(["Rephrase: hello"], decoding=decoding, n=2, seed=1)
    for failed in (first, second):  # no text, and the server's words to say why
        assert failed.text == "" and not failed.finished and "maximum context length" in failed.failure
    hostile.mode = "nul"
    ((text, finished, failure),) = generator.generate(["Rephrase: hello"], decoding=decoding, n=1, seed=1)[0:1][0]
    assert finished and not failure and "\x00" not in text and text.encode("utf-8")


def test_a_refused_generation_candidate_is_kept_with_the_servers_words(hostile, lab, researcher, client):
    from generation.models import create_run
    from generation.tasks import generate_batch

    hostile.mode = "refuse"
    llm.get_generator.cache_clear()
    campaign = Campaign.objects.create(slug="refused", name="Refused", created_by=researcher)
    run = create_run(campaign, sources=["The cat sleeps."], templates=["naive"], model="lab", max_new_tokens=8)
    try:
        generate_batch(run.pk, list(run.sources.values_list("pk", flat=True)))
    finally:
        llm.get_generator.cache_clear()
    (output,) = run.outputs.all()
    assert not output.accepted and output.reject_reason == "server-failed"
    assert "maximum context length" in output.raw_output and len(output.raw_output) <= MESSAGE_CHARS
    run.refresh_from_db()
    assert run.status == run.Status.DONE and campaign.pairs.count() == 0  # that candidate failed, not the run
    client.force_login(researcher)
    page = client.get(reverse("generation-show-run", args=[campaign.slug, run.pk])).content.decode()
    assert "the LLM server refused it or answered unusably" in page and "<script>alert" not in page


# Exports.


def test_an_export_that_cannot_encode_a_chunk_ends_with_its_failure_line():
    sent = b"".join(guarded_chunks(iter(["pair_id,source\r\n", "p1,fine\r\n", "p2,\ud800\r\n"]), "pairs.csv"))
    assert sent == b"pair_id,source\r\np1,fine\r\n" + FAILED_EXPORT_LINE.encode()

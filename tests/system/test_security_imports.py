"""Hostile corpora against the live server: every import path refuses them, whole, with a message."""

import json

import pytest
import requests

from annotation.assignment import record_judgment
from campaigns.models import Pair
from generation.models import GenerationRun
from tests.factories import make_judge
from tests.system.conftest import post_form

pytestmark = pytest.mark.django_db(transaction=True)

LONG = "long " * 1199 + "words"  # 6,000 characters, over the default limit of 5,000


def upload(browser, base, campaign, content, filename, **fields):
    url = f"{base}/campaigns/{campaign.slug}/upload/"
    data = {"format": "auto", "corpus": ""} | fields
    return post_form(browser, url, data, files={"file": (filename, content.encode())})


FILES = {
    "csv": ("pairs.csv", f"source,hypothesis\nshort,{LONG}\n"),
    "tsv": ("pairs.tsv", f"source\thypothesis\nshort\t{LONG}\n"),
    "jsonl": ("pairs.jsonl", json.dumps({"source": LONG, "hypothesis": "short"}) + "\n"),
    "mrpc": ("msr.txt", f"Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n1\t1\t2\t{LONG}\tshort\n"),
    "paws": ("paws.tsv", f"id\tsentence1\tsentence2\tlabel\n1\tshort\t{LONG}\t0\n"),
}


@pytest.mark.parametrize("kind", FILES)
@pytest.mark.parametrize("as_what", ["pairs", "training", "controls"])
def test_an_over_long_sentence_is_refused_by_every_file_format(live_server, campaign, browser_of, kind, as_what):
    before = Pair.objects.count()
    filename, content = FILES[kind]
    extra = {as_what: "on"} if as_what != "pairs" else {}
    response = upload(browser_of(campaign.created_by), live_server.url, campaign, content, filename, **extra)
    assert response.status_code == 200
    assert "PARASOL_MAX_SENTENCE_CHARS" in response.text and "6,000 characters" in response.text
    assert Pair.objects.count() == before


def test_an_over_long_sentence_is_refused_by_the_api(live_server, campaign, api_of):
    response = api_of(campaign.created_by).post(
        f"{live_server.url}/api/campaigns/demo/pairs/", json=[{"source": "ok", "hypothesis": LONG}]
    )
    assert response.status_code == 400 and "PARASOL_MAX_SENTENCE_CHARS" in response.json()["detail"]
    assert not campaign.real_pairs.exists()


def test_a_huge_sentence_already_stored_still_renders_its_page(live_server, campaign):
    """The highlight's cost is bounded whatever reaches it (456 KB once killed a worker)."""
    huge = "alpha beta gamma " * 27_000
    Pair.objects.create(campaign=campaign, external_id="huge", source=huge, hypothesis=huge.replace("beta", "delta"))
    judge = make_judge(campaign)
    session = requests.Session()
    session.cookies.set(f"parasol_judge_{campaign.pk}", judge.token)
    for _ in range(6):  # five training pairs, then the huge one
        page = session.get(f"{live_server.url}/j/demo/{judge.token}/", timeout=60)
        assert page.status_code == 200
        assignment = judge.assignments.filter(judgment__isnull=True).get()
        if assignment.pair.external_id == "huge":
            break
        record_judgment(assignment, {"answer": "same_meaning"})
    assert "alpha beta gamma" in page.text


def test_a_wide_csv_is_refused_before_anything_is_stored(live_server, campaign, browser_of):
    header = "source,hypothesis," + ",".join(f"c{i}" for i in range(1000))
    row = "a,b," + ",".join("x" for _ in range(1000))
    response = upload(browser_of(campaign.created_by), live_server.url, campaign, f"{header}\n{row}\n", "wide.csv")
    assert response.status_code == 200 and "PARASOL_IMPORT_MAX_COLUMNS" in response.text
    assert not campaign.real_pairs.exists()


def test_wide_or_heavy_metadata_is_refused_by_the_api(live_server, campaign, api_of):
    api = api_of(campaign.created_by)
    url = f"{live_server.url}/api/campaigns/demo/pairs/"
    # Keys beyond the cap are a conflict with the campaign's metadata keys (they add up over rows): 409.
    wide = {"source": "a", "hypothesis": "b", "metadata": {f"c{i}": "x" for i in range(1000)}}
    heavy = {"source": "a", "hypothesis": "b", "metadata": {"blob": "x" * 100_000}}
    for body, setting, status in ((wide, "PARASOL_METADATA_MAX_KEYS", 409), (heavy, "PARASOL_MAX_METADATA_CHARS", 400)):
        response = api.post(url, json=[body])
        assert response.status_code == status and setting in str(response.json()), (setting, response.json())
    assert not campaign.real_pairs.exists()


HOSTILE_BODIES = {
    "lone surrogate in a sentence": '[{"source": "a\\ud800b", "hypothesis": "c"}]',
    "lone surrogate in metadata": '[{"source": "a", "hypothesis": "c", "note": "\\udfff"}]',
    "1e999 in metadata": '[{"source": "a", "hypothesis": "c", "metadata": {"score": 1e999}}]',
    "-1e999 in a list": '[{"source": "a", "hypothesis": "c", "scores": [1, -1e999]}]',
}


@pytest.mark.parametrize("name", HOSTILE_BODIES)
def test_hostile_json_bodies_get_400_and_store_nothing(live_server, campaign, api_of, name):
    response = api_of(campaign.created_by).post(
        f"{live_server.url}/api/campaigns/demo/pairs/",
        data=HOSTILE_BODIES[name].encode(),
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 400, response.text[:300]
    assert not campaign.real_pairs.exists()


def test_a_file_part_in_the_api_form_body_gets_a_4xx(live_server, campaign, api_of):
    response = api_of(campaign.created_by).post(
        f"{live_server.url}/api/campaigns/demo/pairs/",
        data={"hypothesis": "b"},
        files={"source": ("x.txt", b"a file where text belongs")},
    )
    assert response.status_code == 415 and "Unsupported media type" in response.json()["detail"]
    assert not campaign.real_pairs.exists()


def test_a_200_digit_id_does_not_break_later_imports_without_ids(live_server, campaign, api_of):
    api = api_of(campaign.created_by)
    url = f"{live_server.url}/api/campaigns/demo/pairs/"
    assert api.post(url, json=[{"id": "9" * 200, "source": "a", "hypothesis": "b"}]).status_code == 201
    response = api.post(url, json=[{"source": "c", "hypothesis": "d"}])
    assert response.status_code == 201
    assert sorted(len(pid) for pid in campaign.real_pairs.values_list("external_id", flat=True)) == [1, 200]


def test_an_over_long_generation_source_is_refused_by_the_api_and_the_page(live_server, campaign, api_of, browser_of):
    """Generation sources become pairs' source sentences: the same limit holds there."""
    body = {"campaign": "demo", "templates": ["naive"], "sources": ["Short one.", LONG]}
    response = api_of(campaign.created_by).post(f"{live_server.url}/api/generations/", json=body)
    assert response.status_code == 400 and "PARASOL_MAX_SENTENCE_CHARS" in response.text
    url = f"{live_server.url}/campaigns/demo/generations/new/"
    form = {"templates": "naive", "model": "embedded", "decoding": "greedy", "temperature": 0.7, "top_p": 0.9}
    form |= {"max_new_tokens": 16, "seed": 0, "candidates": 1, "corpus": "LLM", "sources_from": "file"}
    page = post_form(browser_of(campaign.created_by), url, form, files={"sources_file": ("s.txt", LONG.encode())})
    assert page.status_code == 200 and "PARASOL_MAX_SENTENCE_CHARS" in page.text
    assert not GenerationRun.objects.exists()

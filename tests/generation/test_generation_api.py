"""REST API for generation runs: access, create, follow, cancel, resume, outputs."""

import base64
import json

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from generation import llm
from generation.models import GenerationRun, GenerationSource, create_run
from parasol import queues
from parasol.celery import app as celery_app
from tests import servers
from tests.factories import add_pairs
from tests.generation.test_generation_run import FakeGenerator

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(researcher):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    return client


def create(api, **data):
    body = {"campaign": "demo", "templates": ["naive"], "sources": ["The cat sleeps.", "It rains."], **data}
    return api.post(
        "/api/generations/", {key: value for key, value in body.items() if value is not None}, format="json"
    )


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("get", "/api/generations/"),
        ("post", "/api/generations/"),
        ("get", "/api/generations/{pk}/"),
        ("post", "/api/generations/{pk}/cancel/"),
        ("post", "/api/generations/{pk}/resume/"),
        ("get", "/api/generations/{pk}/outputs/"),
    ],
)
def test_anonymous_and_non_staff_users_reach_no_generation_endpoint(campaign, outsider, method, url):
    run = create_run(campaign, sources=["One."], templates=["naive"])
    url = url.format(pk=run.pk)
    assert getattr(APIClient(), method)(url).status_code in (401, 403)
    member = APIClient()
    member.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=outsider).key}")
    assert getattr(member, method)(url).status_code == 403
    run.refresh_from_db()
    assert run.status == GenerationRun.Status.QUEUED


def test_it_creates_a_run_and_queues_it_on_the_generation_queue(api, campaign, django_capture_on_commit_callbacks):
    old = celery_app.conf.broker_url, celery_app.conf.result_backend
    with servers.redis_server() as url:
        servers.use_broker(url, results=url)
        try:
            with django_capture_on_commit_callbacks(execute=True):
                response = create(api, max_new_tokens=16, seed=4)
            queued = [json.loads(raw) for raw in queues.client().lrange(queues.GENERATION, 0, -1)]
        finally:
            servers.use_broker(*old)
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["status"] == "queued" and body["templates"] == ["naive"] and body["max_new_tokens"] == 16
    assert body["progress"]["expected"] == 2 and body["progress"]["done"] == 0
    run = GenerationRun.objects.get(pk=body["id"])
    # The messages as the worker reads them from Redis: the model's speed is not measured yet, so each of
    # the first batches (PARASOL_GENERATION_BATCHES_PER_RUN of them) holds one source, and its outputs come soon.
    assert [message["headers"]["task"] for message in queued] == ["generation.tasks.generate_batch"] * 2
    sent = [json.loads(base64.b64decode(message["body"]))[0] for message in queued]
    assert sorted(sent) == [[run.pk, [pk]] for pk in run.sources.values_list("pk", flat=True)]


def test_it_takes_the_sources_of_the_campaigns_pairs(api, campaign):
    add_pairs(campaign, 2)
    response = create(api, sources=None, sources_from_campaign=True)
    assert response.status_code == 201, response.json()
    run = GenerationRun.objects.get()
    assert list(run.sources.values_list("text", flat=True)) == [
        "Source sentence number 1.",
        "Source sentence number 2.",
    ]


# 400: a value breaks a rule the schema states; 409: values clash with each other or with stored data.
@pytest.mark.parametrize(
    ("data", "status", "message"),
    [
        ({"templates": ["nope"]}, 409, "unknown template 'nope'"),
        ({"model": "no-such/model"}, 400, '"no-such/model" is not one of: embedded.'),
        ({"sources": None}, 400, "Give sources, or set sources_from_campaign."),
        ({"decoding": "greedy", "candidates": 3}, 409, "greedy decoding gives one candidate per source"),
        ({"seed": 2**31}, 400, "less than or equal to 2147483647"),
        ({"sources": ["One.", 2]}, 400, "Not a valid string."),
        ({"surprise": 1}, 400, "Unknown field"),
    ],
)
def test_it_rejects_a_bad_run_with_a_clear_message(api, campaign, data, status, message):
    response = create(api, **data)
    assert response.status_code == status
    assert message in str(response.json())
    assert not GenerationRun.objects.exists()


def test_it_follows_cancels_and_resumes_a_run(api, campaign, monkeypatch):
    monkeypatch.setattr(llm, "get_generator", lambda model: FakeGenerator())
    run_id = create(api).json()["id"]
    GenerationRun.objects.get(pk=run_id).run_inline()
    body = api.get(f"/api/generations/{run_id}/").json()
    assert body["status"] == "done" and body["progress"]["pairs"] == 2
    outputs = api.get(f"/api/generations/{run_id}/outputs/").json()["results"]
    assert [output["source"] for output in outputs] == ["The cat sleeps.", "It rains."]
    assert outputs[0]["accepted"] and outputs[0]["pair_id"] == f"gen{run_id}-1-naive-0"
    assert api.post(f"/api/generations/{run_id}/cancel/").status_code == 409
    assert api.post(f"/api/generations/{run_id}/resume/").status_code == 409
    second = create(api).json()["id"]
    assert api.post(f"/api/generations/{second}/cancel/").json()["status"] == "cancelled"
    assert api.post(f"/api/generations/{second}/resume/").json()["status"] == "queued"
    listed = api.get("/api/generations/", {"campaign": "demo"}).json()["results"]
    assert [run["id"] for run in listed] == [second, run_id]
    assert api.get("/api/generations/", {"campaign": "other"}).json()["results"] == []


@pytest.mark.parametrize("model", ["/etc/shadow", "/etc/no-such-file"])
def test_it_refuses_a_server_path_as_the_model_and_stores_nothing(api, campaign, model):
    response = create(api, model=model)
    assert response.status_code == 400
    assert response.json() == {"model": [f'"{model}" is not one of: embedded.']}
    assert not GenerationRun.objects.exists() and not GenerationSource.objects.exists()


@pytest.mark.parametrize("query", ["limit=0", "limit=1001", "limit=abc", "offset=-1", "offset=1.5", "limit=2&limit=3"])
@pytest.mark.parametrize("which", ["own", "missing"])
def test_the_outputs_paging_is_checked_as_the_schema_says(api, campaign, query, which):
    """The schema bounds `limit` (1-1000) and `offset` (0 or more) on the outputs too: out of them, a 400 naming
    the parameter, whichever run the path names."""
    run = create_run(campaign, sources=["The cat sleeps."], templates=["naive"])
    pk = run.pk if which == "own" else run.pk + 1000
    response = api.get(f"/api/generations/{pk}/outputs/?{query}")
    assert response.status_code == 400, response.content
    assert query.split("=")[0] in response.json()
    assert api.get(f"/api/generations/{run.pk}/outputs/?limit=1000&offset=0").status_code == 200

import io

import pandas as pd
import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation import assignment as assign
from campaigns.task_types import task_type_names
from tests.factories import add_pairs, make_judge


@pytest.fixture
def api(researcher):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    return client


@pytest.mark.parametrize(
    "method, url",
    [
        ("get", "/api/campaigns/"),
        ("post", "/api/campaigns/"),
        ("get", "/api/campaigns/demo/"),
        ("get", "/api/campaigns/demo/pairs/"),
        ("post", "/api/campaigns/demo/pairs/"),
        ("get", "/api/campaigns/demo/judgments/"),
        ("get", "/api/campaigns/demo/export/"),
    ],
)
def test_anonymous_and_non_staff_users_reach_no_endpoint(campaign, outsider, method, url):
    anonymous = APIClient()
    assert getattr(anonymous, method)(url).status_code in (401, 403)
    member = APIClient()
    member.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=outsider).key}")
    assert getattr(member, method)(url).status_code == 403


def test_it_creates_a_campaign_ready_for_judges(api):
    response = api.post("/api/campaigns/", {"slug": "api", "name": "From the API", "overlap_target": 2}, format="json")
    assert response.status_code == 201
    assert response.json()["judge_url"] == "/j/api/"
    from campaigns.models import Campaign

    assert Campaign.objects.get(slug="api").training_pairs.count() == 5


def test_it_bulk_creates_pairs(api, campaign):
    rows = [
        {"id": "a", "source": "One.", "hypothesis": "Uno.", "label": "1", "corpus": "x"},
        {"id": "b", "source": "Two.", "hypothesis": "Dos.", "label": "no"},
    ]
    response = api.post("/api/campaigns/demo/pairs/", rows, format="json")
    assert response.status_code == 201 and response.json() == {"created": 2}
    listed = api.get("/api/campaigns/demo/pairs/").json()["results"]
    assert [(p["id"], p["gold_label"]) for p in listed] == [("a", 1), ("b", 0)]


def test_a_bad_bulk_create_creates_nothing(api, campaign):
    rows = [{"id": "a", "source": "One.", "hypothesis": "Uno."}, {"id": "b", "source": "", "hypothesis": "Dos."}]
    response = api.post("/api/campaigns/demo/pairs/", rows, format="json")
    assert response.status_code == 400 and response.json()["detail"] == "row 2: source: This field may not be blank."
    assert campaign.pairs.count() == 0


def test_it_lists_judgments_read_only(api, campaign):
    add_pairs(campaign, 1)
    judge = make_judge(campaign)
    assign.record_judgment(assign.next_assignment(judge), {"answer": "same_meaning"}, 900)
    data = api.get("/api/campaigns/demo/judgments/").json()["results"]
    assert len(data) == 1 and data[0]["label"] == "same_meaning" and data[0]["is_training"] is True
    assert api.post("/api/campaigns/demo/judgments/", {}).status_code == 405


def test_it_exports_csv_streamed(api, campaign):
    add_pairs(campaign, 2)
    response = api.get("/api/campaigns/demo/export/?kind=pairs")
    assert response.streaming
    frame = pd.read_csv(io.StringIO(b"".join(response.streaming_content).decode()))
    assert response["Content-Type"].startswith("text/csv") and len(frame) == 2
    judgments = api.get("/api/campaigns/demo/export/?kind=judgments")
    assert b"".join(judgments.streaming_content).decode().startswith("judge,english_level,pair_id")
    assert api.get("/api/campaigns/demo/export/?kind=everything").status_code == 400


def test_the_openapi_schema_is_served_to_researchers_only(client, api):
    assert client.get("/api/schema/").status_code in (401, 403)
    response = api.get("/api/schema/")
    assert response.status_code == 200
    assert b"/api/campaigns/{slug}/pairs/" in response.content


def test_it_creates_a_criteria_campaign_with_system_keys_and_refuses_an_unknown_type(api):
    response = api.post(
        "/api/campaigns/",
        {"slug": "pem", "name": "PEM", "task_type": "criteria", "system_keys": "generator"},
        format="json",
    )
    refused = api.post("/api/campaigns/", {"slug": "bad", "name": "Bad", "task_type": "nope"}, format="json")

    assert response.status_code == 201
    assert (response.json()["task_type"], response.json()["system_keys"]) == ("criteria", "generator")
    assert refused.status_code == 400
    assert refused.json()["task_type"] == [f'"nope" is not one of: {", ".join(task_type_names())}.']


# Issue 36: the published schema is the contract; each rule below is stated in /api/schema/ and enforced.
@pytest.mark.parametrize(
    ("query", "error"),
    [
        ("?limit=-5&offset=abc", {"limit": ["limit must be a whole number from 1 to 1000."]}),
        ("?offset=abc", {"offset": ["offset must be a whole number 0 or more."]}),
        ("?limit=%205", {"limit": ["limit must be a whole number from 1 to 1000."]}),
        ("?limit=1001", {"limit": ["limit must be a whole number from 1 to 1000."]}),
        ("?limit=1&limit=2", {"limit": ["Give limit at most once."]}),
    ],
)
def test_it_refuses_bad_paging_instead_of_serving_the_default_page(api, campaign, query, error):
    response = api.get(f"/api/campaigns/demo/pairs/{query}")
    assert response.status_code == 400 and response.json() == error


def test_it_refuses_a_repeated_export_kind(api, campaign):
    response = api.get("/api/campaigns/demo/export/?kind=pairs&kind=judgments")
    assert response.status_code == 400 and response.json() == {"kind": ["Give kind at most once."]}


@pytest.mark.parametrize(
    ("row", "detail"),
    [
        ({"id": 12, "source": "a", "hypothesis": "b"}, "row 1: id: Not a valid string."),
        ({"source": "a", "hypothesis": "b", "label": 1}, 'row 1: label: "1" is not one of'),
        ({"source": " ", "hypothesis": "b"}, "row 1: source: This field may not be blank."),
        ({"source": "a", "hypothesis": "b", "gold": "1"}, "row 1: gold: Unknown field"),
        ({"source": "a", "hypothesis": "b", "metadata": {"k": [1]}}, "row 1: metadata: k: Give a string"),
    ],
)
def test_a_pair_breaking_a_published_rule_is_refused_naming_row_and_field(api, campaign, row, detail):
    response = api.post("/api/campaigns/demo/pairs/", [row], format="json")
    assert response.status_code == 400 and response.json()["detail"].startswith(detail)
    assert campaign.pairs.count() == 0


def test_an_id_used_twice_is_a_conflict_and_stores_nothing(api, campaign):
    rows = [{"id": "a", "source": "One.", "hypothesis": "Uno."}, {"id": "a", "source": "Two.", "hypothesis": "Dos."}]
    response = api.post("/api/campaigns/demo/pairs/", rows, format="json")
    assert response.status_code == 409 and "used twice" in response.json()["detail"]
    assert campaign.pairs.count() == 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"pairs_per_judge": 2**63 - 1}, "pairs_per_judge"),  # SQLite stored it; PostgreSQL refused: same 400 now
        ({"pairs_per_judge": "5"}, "pairs_per_judge"),
        ({"is_open": 0}, "is_open"),
        ({"name": 5}, "name"),
        ({"overlap_target": 101}, "overlap_target"),
        ({"created_at": "2020-01-01T00:00:00Z"}, "created_at"),
    ],
)
def test_a_campaign_value_outside_the_schema_is_refused_on_every_database(api, body, field):
    response = api.post("/api/campaigns/", {"slug": "c", "name": "C", **body}, format="json")
    assert response.status_code == 400 and list(response.json()) == [field]


def test_a_slug_in_use_is_a_conflict(api, campaign):
    response = api.post("/api/campaigns/", {"slug": "demo", "name": "Again"}, format="json")
    assert response.status_code == 409 and response.json() == {"slug": ["This slug is not available; choose another."]}


def test_the_schema_publishes_the_rules_and_the_error_statuses(api):
    schema = api.get("/api/schema/?format=json").json()
    campaign = schema["components"]["schemas"]["CampaignRequest"]
    assert campaign["additionalProperties"] is False
    assert (
        campaign["properties"]["pairs_per_judge"]["minimum"],
        campaign["properties"]["pairs_per_judge"]["maximum"],
    ) == (
        1,
        10_000,
    )
    export = schema["paths"]["/api/campaigns/{slug}/export/"]["get"]["responses"]
    assert set(export["200"]["content"]) == {"text/csv", "application/jsonl"}
    assert {"400", "401", "403", "404", "406", "429"} <= set(export)
    assert {"409", "415"} <= set(schema["paths"]["/api/campaigns/{slug}/pairs/"]["post"]["responses"])

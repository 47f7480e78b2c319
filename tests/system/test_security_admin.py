"""Staff reach only their campaigns through the admin, whatever the form (live server; issue 25).

The attacker is a staff user holding every model permission who owns a campaign of their
own and is shown nobody else's. Evidence (judges, assignments, judgments, scores,
generation runs, sources and outputs) is read-only for everyone; every key an editable
admin form takes (raw-id or select) reaches only visible campaigns; django-axes' admin is
for superusers; pairs written in the admin pass the importer's checks.
"""

import json

import pytest
from axes.models import AccessAttempt
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.utils import timezone

from annotation.models import Assignment, CampaignProtocol, Judge, Judgment
from campaigns.models import Campaign, Pair, Score
from generation.models import GenerationOutput, GenerationRun, GenerationSource, PromptTemplate
from tests.factories import add_pairs, make_judge
from tests.system.conftest import log_in, post_form

pytestmark = pytest.mark.django_db(transaction=True)


def judged(campaign):
    """A pair of `campaign` with a judge, an assignment, a judgment and a score; returns the pair."""
    pair = add_pairs(campaign, 1)[0] if not campaign.real_pairs.exists() else campaign.real_pairs.first()
    judge = make_judge(campaign)
    assignment = Assignment.objects.create(judge=judge, pair=pair, position=0, top="source")
    Judgment.objects.create(assignment=assignment, judge=judge, pair=pair, values={"answer": "same_meaning"})
    Score.objects.create(pair=pair, metric="lev", signature="lev|v1", value=0.5)
    run = GenerationRun.objects.create(campaign=campaign, templates=["t"])
    source = GenerationSource.objects.create(run=run, position=0, text="A source.")
    GenerationOutput.objects.create(run=run, source=source, template="t", raw_output="x")
    return pair


@pytest.fixture
def attacker(db):
    user = get_user_model().objects.create_user("mallory", password="pw-mallory-123", is_staff=True)
    user.user_permissions.set(Permission.objects.all())
    return user


@pytest.fixture
def own(attacker):
    """The attacker's own campaign, judged and scored."""
    campaign = Campaign.objects.create(slug="mine", name="Mine", created_by=attacker)
    judged(campaign)
    return campaign


@pytest.fixture
def victim(campaign):
    judged(campaign)
    return campaign


@pytest.fixture
def session(live_server, attacker):
    return log_in(live_server.url, attacker.username, "pw-mallory-123")


EVIDENCE = {
    "annotation/judge": Judge,
    "annotation/assignment": Assignment,
    "annotation/judgment": Judgment,
    "campaigns/score": Score,
    "generation/generationrun": GenerationRun,
    "generation/generationsource": GenerationSource,
    "generation/generationoutput": GenerationOutput,
}


def forged(model, victim, own):
    """Form data for a row of `model` pointing into the victim's campaign by raw ids, as the review posted."""
    pair = victim.real_pairs.first()
    judge = Judge.objects.filter(campaign=own).first()
    return {
        "campaign": victim.pk,
        "consented_at_0": "2026-01-01",
        "consented_at_1": "10:00:00",
        "english_level": "good",
        "judge": judge.pk,
        "pair": pair.pk,
        "assignment": Assignment.objects.filter(pair=pair).first().pk,
        "position": 5,
        "top": "source",
        "values": "{}",
        "metric": "lev",
        "signature": "forged",
        "value": "0.99",
        "run": GenerationRun.objects.filter(campaign=victim).first().pk,
        "source": GenerationSource.objects.filter(run__campaign=victim).first().pk,
        "template": "t",
        "text": "forged",
        "raw_output": "forged",
        "templates": '["t"]',
    }


def counts():
    return {name: model.objects.count() for name, model in EVIDENCE.items()}


@pytest.mark.parametrize("name", EVIDENCE)
def test_evidence_is_never_added_changed_or_deleted_through_the_admin(live_server, session, own, victim, name):
    model = EVIDENCE[name]
    base = f"{live_server.url}/admin/{name}"
    before = counts()
    mine = model.objects.filter(**{f"{model_path(name)}": own}).first()
    snapshot = model.objects.filter(pk=mine.pk).values().get()
    data = forged(model, victim, own)
    assert session.get(f"{base}/add/").status_code == 403
    assert post_form(session, f"{base}/add/", data).status_code == 403
    assert post_form(session, f"{base}/{mine.pk}/change/", data).status_code == 403
    assert post_form(session, f"{base}/{mine.pk}/delete/", {"post": "yes"}).status_code == 403
    bulk = {"action": "delete_selected", "_selected_action": [mine.pk], "post": "yes"}
    post_form(session, f"{base}/", bulk)
    assert counts() == before
    assert model.objects.filter(pk=mine.pk).values().get() == snapshot
    view = session.get(f"{base}/{mine.pk}/change/")  # shown to those who may see the campaign
    assert view.status_code == 200 and 'name="_save"' not in view.text


def model_path(name):
    return {
        "annotation/judge": "campaign",
        "annotation/assignment": "judge__campaign",
        "annotation/judgment": "pair__campaign",
        "campaigns/score": "pair__campaign",
        "generation/generationrun": "campaign",
        "generation/generationsource": "run__campaign",
        "generation/generationoutput": "run__campaign",
    }[name]


def test_a_score_forged_on_a_colleagues_pair_never_reaches_their_export(live_server, session, own, victim, api_of):
    pair = victim.real_pairs.first()
    data = {"pair": pair.pk, "metric": "bleu", "signature": "forged", "value": "0.99", "details": ""}
    assert post_form(session, f"{live_server.url}/admin/campaigns/score/add/", data).status_code == 403
    assert not Score.objects.filter(signature="forged").exists()
    export = api_of(victim.created_by).get(f"{live_server.url}/api/campaigns/demo/export/?kind=pairs").text
    assert "0.99" not in export


def test_no_editable_admin_form_reaches_another_campaign(live_server, session, own, victim, attacker):
    base = f"{live_server.url}/admin"
    pair_data = {"external_id": "forged", "corpus": "", "source": "A.", "hypothesis": "B.", "metadata": "{}"}
    pair_data |= {"gold_tags": "{}", "campaign": victim.pk}
    response = post_form(session, f"{base}/campaigns/pair/add/", pair_data)
    assert response.status_code == 200 and "Select a valid choice" in response.text
    template = {
        "campaign": victim.pk,
        "name": "forged",
        "system": "",
        "turns": '[{"role": "user", "content": "{source}"}]',
    }
    response = post_form(
        session, f"{base}/generation/prompttemplate/add/", template | {"created_by": victim.created_by.pk}
    )
    assert response.status_code == 200 and "Select a valid choice" in response.text
    CampaignProtocol.objects.filter(campaign=victim).delete()
    protocol = {"campaign": victim.pk, "control_share": "0.1", "max_judges": "", "completion_code": "X"}
    response = post_form(session, f"{base}/annotation/campaignprotocol/add/", protocol)
    assert response.status_code == 200 and "Select a valid choice" in response.text
    assert not Pair.objects.filter(external_id="forged").exists()
    assert not PromptTemplate.objects.filter(name="forged").exists()
    assert not CampaignProtocol.objects.filter(campaign=victim).exists()
    # On their own campaign the template is theirs, whoever they name as its author.
    response = post_form(session, f"{base}/generation/prompttemplate/add/", template | {"campaign": own.pk})
    assert response.status_code == 302
    assert PromptTemplate.objects.get(name="forged").created_by == attacker


def test_a_row_never_moves_to_another_campaign_even_one_shared_with_its_editor(
    live_server, session, own, victim, attacker
):
    victim.shared_with.add(attacker)
    pair = Pair.objects.create(campaign=own, external_id="fresh", source="A.", hypothesis="B.")  # not judged yet
    url = f"{live_server.url}/admin/campaigns/pair/{pair.pk}/change/"
    data = {"campaign": victim.pk, "external_id": pair.external_id, "corpus": "", "source": "Moved?"}
    data |= {"hypothesis": pair.hypothesis, "metadata": "{}", "gold_tags": "{}"}
    assert post_form(session, url, data).status_code == 302
    pair.refresh_from_db()
    assert pair.campaign == own and pair.source == "Moved?"


def test_a_judged_pair_is_neither_rewritten_nor_deleted_with_its_judgments(live_server, session, own):
    pair = own.real_pairs.first()
    url = f"{live_server.url}/admin/campaigns/pair/{pair.pk}"
    data = {"external_id": pair.external_id, "corpus": "", "source": "Rewritten.", "hypothesis": "Rewritten."}
    post_form(session, f"{url}/change/", data | {"metadata": "{}", "gold_tags": "{}"})
    assert post_form(session, f"{url}/delete/", {"post": "yes"}).status_code == 403
    pair.refresh_from_db()
    assert pair.source != "Rewritten." and Judgment.objects.filter(pair=pair).exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"source": "x" * 106_511}, "PARASOL_MAX_SENTENCE_CHARS"),
        ({"hypothesis": "   "}, "empty hypothesis"),
        ({"metadata": json.dumps({"system": "a\u0000b"})}, "NUL"),
        ({"metadata": json.dumps({"x": "y" * 200_000})}, "PARASOL_MAX_METADATA_CHARS"),
        ({"metadata": "[1, 2]"}, "must be a JSON object"),
        ({"gold_tags": json.dumps({"source": [1], "hypothesis": [0, 0]})}, "source_tags has 1 tags"),
    ],
)
def test_the_pair_admin_runs_the_importers_checks(live_server, session, own, change, message):
    data = {"campaign": own.pk, "external_id": "new", "corpus": "", "source": "A cat.", "hypothesis": "A dog."}
    data |= {"metadata": "{}", "gold_tags": "{}"}
    response = post_form(session, f"{live_server.url}/admin/campaigns/pair/add/", data | change)
    assert response.status_code == 200 and message in response.text
    assert not Pair.objects.filter(external_id="new").exists()
    ok = post_form(session, f"{live_server.url}/admin/campaigns/pair/add/", data)
    assert ok.status_code == 302
    new = Pair.objects.get(external_id="new")
    assert new.words("hypothesis") == ["A", "dog", "."]
    changed = post_form(session, f"{live_server.url}/admin/campaigns/pair/{new.pk}/change/", data | change)
    assert changed.status_code == 200 and message in changed.text
    new.refresh_from_db()
    assert new.source == "A cat." and new.hypothesis == "A dog."


@pytest.mark.parametrize("model", ["accessattempt", "accesslog", "accessfailurelog"])
def test_the_axes_admin_is_for_superusers_only(live_server, session, model):
    attempt = AccessAttempt.objects.create(
        username="victim", ip_address="10.0.0.5", user_agent="x", failures_since_start=9, attempt_time=timezone.now()
    )
    base = f"{live_server.url}/admin/axes/{model}/"
    assert session.get(base).status_code == 403
    assert "10.0.0.5" not in session.get(f"{live_server.url}/admin/").text
    assert "axes" not in session.get(f"{live_server.url}/admin/").text.lower()
    if model == "accessattempt":
        assert post_form(session, f"{base}{attempt.pk}/delete/", {"post": "yes"}).status_code == 403
        bulk = {"action": "delete_selected", "_selected_action": [attempt.pk], "post": "yes"}
        assert post_form(session, base, bulk).status_code == 403
        assert AccessAttempt.objects.filter(pk=attempt.pk).exists()
    get_user_model().objects.create_superuser("root", password="pw-root-123")
    root = log_in(live_server.url, "root", "pw-root-123")
    assert root.get(base).status_code == 200


def test_an_owner_still_moves_a_judged_campaign_to_the_trash_from_the_admin(live_server, session, own):
    response = post_form(session, f"{live_server.url}/admin/campaigns/campaign/{own.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    own.refresh_from_db()
    assert own.deleted_at is not None and Judgment.objects.filter(pair__campaign=own).exists()


def test_the_user_and_group_admin_is_for_superusers_only(live_server, session, attacker):
    base = f"{live_server.url}/admin/auth"
    for url in (f"{base}/user/", f"{base}/user/{attacker.pk}/change/", f"{base}/group/", f"{base}/user/add/"):
        assert session.get(url).status_code == 403, url
    promote = {"username": attacker.username, "is_active": "on", "is_staff": "on", "is_superuser": "on"}
    assert post_form(session, f"{base}/user/{attacker.pk}/change/", promote).status_code == 403
    password = {"password1": "Zq8#vL2!pW9-x", "password2": "Zq8#vL2!pW9-x", "usable_password": "true"}
    assert post_form(session, f"{base}/user/{attacker.pk}/password/", password).status_code == 403
    attacker.refresh_from_db()
    assert not attacker.is_superuser


def test_through_gunicorn_a_staff_user_forges_no_evidence_and_reads_no_lockouts(
    gunicorn, attacker, own, victim, settings
):
    """The reported requests, against gunicorn with production settings: a forged Score, a Judgment
    pointed at a colleague's pair, and the axes admin, all refused; nothing is written."""
    from tests.system.conftest import production_login

    session = production_login(attacker, settings, gunicorn)
    pair = victim.real_pairs.first()
    score = {"pair": pair.pk, "metric": "bleu", "signature": "forged", "value": "0.99", "details": ""}
    assert post_form(session, f"{gunicorn}/admin/campaigns/score/add/", score).status_code == 403
    judgment = Judgment.objects.filter(pair__campaign=own).first()
    moved = {
        "assignment": judgment.assignment_id,
        "judge": judgment.judge_id,
        "pair": pair.pk,
        "values": '{"answer": "x"}',
    }
    response = post_form(session, f"{gunicorn}/admin/annotation/judgment/{judgment.pk}/change/", moved)
    assert response.status_code == 403
    assert not Score.objects.filter(signature="forged").exists()
    assert Judgment.objects.get(pk=judgment.pk).pair.campaign == own
    assert session.get(f"{gunicorn}/admin/axes/accessattempt/").status_code in (403, 404)

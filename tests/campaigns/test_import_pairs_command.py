import io
import json

import pytest
from django.core.management import CommandError, call_command

from campaigns.models import TRAINING_TRIAL_SIZE, Campaign, Pair
from campaigns.task_types import default_task_type, get_task_type

CSV = b"id,source,hypothesis,label\nq1,A.,B.,1\nq2,C.,D.,0\n"


def run(*args):
    out = io.StringIO()
    call_command("import_pairs", *map(str, args), stdout=out)
    return out.getvalue()


@pytest.fixture
def corpus_file(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_bytes(CSV)
    return path


@pytest.fixture
def training_file(tmp_path, monkeypatch):
    """A default training trial of its own, so the test does not depend on fixtures/."""
    path = tmp_path / "training_pairs.jsonl"
    rows = [{"source": f"S{i}.", "hypothesis": f"H{i}.", "label": i % 2} for i in range(6)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    monkeypatch.setattr(type(get_task_type(default_task_type())), "training_file", path)
    return path


def test_it_imports_a_file_into_a_campaign(campaign, corpus_file):
    output = run(campaign.slug, corpus_file, "--corpus", "mine")

    assert "Imported 2 pairs into campaign 'demo' (corpus: mine)" in output
    assert list(campaign.pairs.values_list("external_id", "corpus", "gold_label")) == [
        ("q1", "mine", 1),
        ("q2", "mine", 0),
    ]


def test_it_honours_an_explicit_format(campaign, tmp_path):
    path = tmp_path / "msr_paraphrase_test.txt"
    path.write_bytes(b'\xef\xbb\xbfQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n1\t1\t2\t"A.\tB.\n')

    run(campaign.slug, path, "--format", "mrpc")

    assert list(campaign.pairs.values_list("external_id", "corpus", "source")) == [("1-2", "MRPC", '"A.')]


def test_it_creates_an_open_campaign_with_its_training_trial(db, corpus_file, training_file):
    output = run("new-one", corpus_file, "--create")

    campaign = Campaign.objects.get(slug="new-one")
    assert (campaign.name, campaign.is_open) == ("new-one", True)
    assert campaign.real_pairs.count() == 2
    assert campaign.training_pairs.count() == TRAINING_TRIAL_SIZE
    assert "Created campaign 'new-one' ('new-one')" in output


def test_it_creates_a_campaign_its_owner_finds_under_its_name(db, client, researcher, corpus_file, training_file):
    output = run("my-study", corpus_file, "--create", "--owner", "researcher", "--name", "My first study")

    assert "Created campaign 'my-study' ('My first study'), owned by 'researcher'" in output
    client.force_login(researcher)
    listing = client.get("/campaigns/", follow=True)
    assert listing.redirect_chain == [("/", 302)]
    assert b"My first study" in listing.content
    assert client.get("/campaigns/my-study/").status_code == 200
    assert Campaign.objects.get(slug="my-study").name == "My first study"


def test_it_says_a_campaign_created_without_an_owner_is_seen_by_superusers_only(db, corpus_file, training_file):
    output = run("orphan", corpus_file, "--create")

    assert "no owner: only superusers see it (pass --owner USERNAME" in output
    assert Campaign.objects.get(slug="orphan").created_by is None


@pytest.mark.parametrize(
    "username, message",
    [
        ("nobody", "--owner: no user named 'nobody'; create one with"),
        ("outsider", "--owner: 'outsider' is not a researcher"),
    ],
)
def test_it_refuses_an_owner_who_could_not_open_the_campaign(db, outsider, corpus_file, username, message):
    with pytest.raises(CommandError, match=message):
        run("new-one", corpus_file, "--create", "--owner", username)

    assert Campaign.objects.count() == 0
    assert Pair.objects.count() == 0


def test_it_refuses_an_empty_or_overlong_name(db, corpus_file):
    for name in ("  ", "x" * 201):
        with pytest.raises(CommandError, match="--name must be 1 to 200 characters"):
            run("new-one", corpus_file, "--create", "--name", name)

    assert Campaign.objects.count() == 0


def test_it_refuses_to_reown_or_rename_an_existing_campaign(campaign, corpus_file, outsider):
    with pytest.raises(CommandError, match="'demo' already exists; --owner and --name apply to new ones"):
        run(campaign.slug, corpus_file, "--owner", "outsider", "--name", "Taken")

    campaign.refresh_from_db()
    assert (campaign.name, campaign.created_by.username, campaign.pairs.count()) == ("Demo", "researcher", 0)


def test_it_refuses_an_unknown_campaign_without_create(db, corpus_file):
    with pytest.raises(CommandError, match="No campaign with slug 'nope'; pass --create to create it"):
        run("nope", corpus_file)

    assert Campaign.objects.count() == 0


def test_it_refuses_an_invalid_slug(db, corpus_file):
    with pytest.raises(CommandError, match="'not a slug' is not a valid slug"):
        run("not a slug", corpus_file, "--create")


def test_it_refuses_a_missing_file(campaign, tmp_path):
    with pytest.raises(CommandError, match="Cannot read .*missing.csv: No such file or directory"):
        run(campaign.slug, tmp_path / "missing.csv")


@pytest.mark.parametrize(
    "data, message",
    [
        (b"id,source,hypothesis\nq1,A.,B.\nq2,,D.\n", "line 3: empty source. Nothing was imported."),
        (b"id,source,hypothesis\nq1,A.,B.\nq1,C.,D.\n", "line 3: id 'q1' is used twice"),
        (b"", "the file is empty"),
    ],
)
def test_it_leaves_the_database_as_it_was_after_a_bad_file(db, tmp_path, training_file, data, message):
    path = tmp_path / "bad.csv"
    path.write_bytes(data)

    with pytest.raises(CommandError, match=message):
        run("fresh", path, "--create")

    assert Campaign.objects.count() == 0
    assert Pair.objects.count() == 0


def test_it_refuses_a_file_over_the_size_limit_without_reading_it_all(campaign, corpus_file, settings):
    settings.PARASOL_IMPORT_MAX_BYTES = 10

    with pytest.raises(CommandError, match="larger than the limit of 10 bytes"):
        run(campaign.slug, corpus_file)

    assert Pair.objects.count() == 0


def test_it_imports_only_pairs_inside_the_bleu_range_and_names_the_others(tmp_path, db):
    path = tmp_path / "pairs.jsonl"
    path.write_text(
        '{"id": "copy", "source": "The cat sleeps on the old sofa in the living room.", '
        '"hypothesis": "The cat sleeps on the old sofa in the living room."}\n'
        '{"id": "kept", "source": "The cat sleeps on the old sofa in the living room.", '
        '"hypothesis": "A cat is asleep on the old couch in the lounge."}\n'
        '{"id": "long", "source": "The cat sleeps on the old sofa in the living room.", '
        '"hypothesis": "A cat is asleep on the old couch in the lounge, where it spends most afternoons curled '
        'up quietly while the family is out at work and school all day long."}\n'
    )
    out = io.StringIO()
    call_command("import_pairs", "ranged", str(path), "--create", "--bleu-range", "5", "20", stdout=out)
    assert list(Campaign.objects.get(slug="ranged").real_pairs.values_list("external_id", flat=True)) == ["kept"]
    assert "Rejected line 1: BLEU 100.0 is not below 20" in out.getvalue()
    # ParaTag's length filter comes with the BLEU range (section 4.1): inside the range, 31 words against 11.
    assert "Rejected line 3: one sentence has 2.5 times the words of the other or more" in out.getvalue()

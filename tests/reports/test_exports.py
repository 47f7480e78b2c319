import io
import json
from datetime import timedelta

import pandas as pd
import pytest
from django.utils import timezone

from annotation.models import Answer, Assignment, Judge, Judgment
from campaigns.exports import write_csv
from campaigns.importers import import_pairs
from campaigns.models import Campaign, Pair
from reports.exports import PAIR_COLUMNS, judgments_frame, pairs_frame, pairs_with_scores
from reports.frames import load_frames
from tests.factories import add_pairs

VD, SS, MS, SM, DK = (
    Answer.VERY_DIFFERENT,
    Answer.SLIGHTLY_SIMILAR,
    Answer.MOSTLY_SIMILAR,
    Answer.SAME_MEANING,
    Answer.DONT_KNOW,
)
CORPUS = (
    b"id,source,hypothesis,label,corpus\n"
    b'p1,"A, with a comma.","She said ""hi"".",1,web\n'
    b"p2,C.,D.,0,web\n"
    b"p3,E.,F.,,news\n"
    b"p4,G.,H.,yes,news\n"
    b"p5,I.,J.,no,news\n"
    b"p6,K.,L.,,news\n"
)

# Answers per pair (one judge each), and what the pairs CSV must say of them.
CASES = {
    # pair: (answers, majority_label, paraphrase)
    "p1": ([SM, SM, MS], "same_meaning", 1),
    "p2": ([VD, SS, SM], None, 0),  # three-way tie of answers, but 2 binary votes to 1
    "p3": ([MS, VD, DK, DK], "dont_know", None),  # Don't know wins the answers; 1-1 binary tie
    "p4": ([DK], "dont_know", None),  # no binary vote
    "p5": ([SS, SS, MS, MS], None, None),  # tie of answers and of binary votes
    "p6": ([], None, None),  # not judged
}


def judge(campaign, level="good"):
    return Judge.objects.create(campaign=campaign, consented_at=timezone.now(), english_level=level)


def answer(judge, pair, label, *, position, is_training=False, top="source", response_ms=1500):
    assignment = Assignment.objects.create(
        judge=judge, pair=pair, position=position, is_training=is_training, top=top, shown_at=timezone.now()
    )
    return Judgment.objects.create(
        assignment=assignment,
        judge=judge,
        pair=pair,
        values={"answer": label},
        is_training=is_training,
        response_ms=response_ms,
    )


@pytest.fixture
def judged(campaign):
    """The corpus imported, each case's answers given by separate judges, plus training answers."""
    import_pairs(campaign, CORPUS, filename="corpus.csv")
    campaign.ensure_training_pairs()
    pairs = {pair.external_id: pair for pair in campaign.pairs.all()}
    judges = [judge(campaign) for _ in range(4)]
    for pair_id, (answers, _, _) in CASES.items():
        for position, (someone, label) in enumerate(zip(judges, answers, strict=False), start=10):
            answer(someone, pairs[pair_id], label, position=position + int(pair_id[1:]) * 10)
    # Training answers must not count in the pairs CSV, real pair or not.
    for position, pair in enumerate(campaign.training_pairs[:2], start=1):
        answer(judges[0], pair, VD, position=position, is_training=True, top="hypothesis")
    return campaign


def test_it_has_one_row_per_real_pair_with_the_columns_in_order(judged):
    frame = pairs_frame(judged)

    assert list(frame.columns) == PAIR_COLUMNS
    assert list(frame["pair_id"]) == ["p1", "p2", "p3", "p4", "p5", "p6"]
    assert frame["gold_label"].tolist() == [1, 0, pd.NA, 1, 0, pd.NA]


@pytest.mark.parametrize("pair_id", CASES)
def test_it_counts_answers_and_takes_the_majorities(judged, pair_id):
    answers, majority_label, paraphrase = CASES[pair_id]

    row = pairs_frame(judged).set_index("pair_id").loc[pair_id]

    assert row["n_judgments"] == len(answers)
    for answer in Answer:
        assert row[f"n_{answer.value}"] == answers.count(answer)
    assert row["majority_label"] == majority_label or (majority_label is None and pd.isna(row["majority_label"]))
    assert row["paraphrase"] == paraphrase if paraphrase is not None else pd.isna(row["paraphrase"])


def test_it_leaves_training_judgments_out_of_the_pairs_counts(judged):
    frame = pairs_frame(judged)

    assert frame["n_judgments"].sum() == sum(len(answers) for answers, _, _ in CASES.values())
    assert not frame["pair_id"].str.startswith("training").any()


def test_it_writes_ties_as_empty_cells(judged):
    buffer = io.StringIO()

    write_csv(pairs_frame(judged), buffer)

    lines = buffer.getvalue().splitlines()
    assert lines[0] == ",".join(PAIR_COLUMNS)
    assert lines[-2] == "p5,news,I.,J.,0,4,0,2,2,0,0,,"
    assert lines[-1] == "p6,news,K.,L.,,0,0,0,0,0,0,,"


def test_it_appends_extra_columns_merged_on_pair_id(judged):
    scores = pd.DataFrame({"pair_id": ["p2", "p1"], "bleu": [0.2, 0.9]})

    frame = pairs_frame(judged, extra=[scores, lambda campaign: pd.DataFrame({"pair_id": ["p6"], "chrf": [0.5]})])

    assert list(frame.columns) == [*PAIR_COLUMNS, "bleu", "chrf"]
    assert frame["bleu"].tolist()[:3] == [0.9, 0.2, pytest.approx(float("nan"), nan_ok=True)]
    assert frame["chrf"].notna().tolist() == [False] * 5 + [True]


def test_it_exports_an_empty_campaign_with_headers(campaign):
    assert list(pairs_frame(campaign).columns) == PAIR_COLUMNS
    assert len(pairs_frame(campaign)) == 0
    assert len(judgments_frame(campaign)) == 0


def test_it_has_one_row_per_judgment_with_training_flagged(judged):
    frame = judgments_frame(judged)

    assert len(frame) == sum(len(answers) for answers, _, _ in CASES.values()) + 2
    training = frame[frame["is_training"]]
    assert training["pair_id"].tolist() == ["training-1", "training-2"]
    assert set(training["top_sentence"]) == {"hypothesis"}
    assert set(frame[~frame["is_training"]]["top_sentence"]) == {"source"}


def test_it_describes_each_judgment(campaign):
    import_pairs(campaign, CORPUS)
    someone = judge(campaign, level="native")
    judgment = answer(someone, campaign.pairs.get(external_id="p3"), DK, position=1, response_ms=2345)
    Assignment.objects.filter(pk=judgment.assignment_id).update(shown_at=judgment.created_at - timedelta(seconds=2))
    assignment = Assignment.objects.get(pk=judgment.assignment_id)

    row = judgments_frame(campaign).iloc[0].to_dict()

    assert pd.isna(row.pop("paraphrase"))
    assert row == {
        "judge": someone.pseudonym,
        "english_level": "native",
        "pair_id": "p3",
        "corpus": "news",
        "system": "",
        "label": "dont_know",
        "is_training": False,
        "is_control": False,
        "judge_excluded": False,
        "top_sentence": "source",
        "response_ms": 2345,
        "shown_at": assignment.shown_at.isoformat(),
        "answered_at": judgment.created_at.isoformat(),
    }


def test_it_maps_each_judgment_to_the_binary_label(campaign):
    import_pairs(campaign, CORPUS)
    someone = judge(campaign)
    for position, label in enumerate([VD, SS, MS, SM], start=1):
        answer(someone, campaign.pairs.get(external_id=f"p{position}"), label, position=position)

    assert judgments_frame(campaign)["paraphrase"].tolist() == [0, 0, 1, 1]


def test_it_imports_its_own_export_again(judged, tmp_path):
    path = tmp_path / "pairs.csv"
    write_csv(pairs_frame(judged), path)
    copy = Campaign.objects.create(slug="copy", name="Copy")

    import_pairs(copy, path.read_bytes(), filename=path.name)

    fields = ("external_id", "corpus", "source", "hypothesis", "gold_label")
    assert list(copy.pairs.values_list(*fields)) == list(judged.real_pairs.values_list(*fields))


def test_it_neutralises_spreadsheet_formulas_but_not_negative_numbers(tmp_path):
    import pandas as pd

    from campaigns.exports import write_csv

    frame = pd.DataFrame({"source": ["=cmd|' /C calc'!A0", "@SUM(A1)", "plain"], "score": [-0.5, 1.0, 2.0]})
    out = tmp_path / "x.csv"
    write_csv(frame, out)
    back = pd.read_csv(out)
    assert back["source"].tolist() == ["'=cmd|' /C calc'!A0", "'@SUM(A1)", "plain"]
    assert back["score"].tolist() == [-0.5, 1.0, 2.0]


# Provenance and metadata columns (issue 15).

GENERATED = {
    "generator": "HuggingFaceTB/SmolLM2-135M-Instruct",
    "generator_revision": "abc123",
    "template": "naive",
    "decoding": {"temperature": 0.7, "top_p": 0.9},
    "seed": 7,
    "candidate": 1,
    "generation_run": 3,
}


def test_it_exports_generation_provenance_as_columns_after_the_scores(campaign):
    Pair.objects.create(campaign=campaign, external_id="g1", source="A.", hypothesis="B.", metadata=GENERATED)

    frame, _ = pairs_with_scores(campaign)

    provenance = ["generator", "generator_revision", "template", "generation_run", "candidate", "decoding", "seed"]
    assert list(frame.columns) == [*PAIR_COLUMNS, *provenance]
    row = frame.iloc[0]
    assert (row["generator"], row["template"], row["candidate"]) == (GENERATED["generator"], "naive", 1)
    assert row["decoding"] == GENERATED["decoding"]  # the CSV guard writes it as JSON
    buffer = io.StringIO()
    write_csv(frame, buffer)
    assert json.loads(pd.read_csv(io.StringIO(buffer.getvalue()))["decoding"][0]) == GENERATED["decoding"]


def test_it_round_trips_an_imported_system_column(campaign, tmp_path):
    corpus = b"id,source,hypothesis,label,note,system,extra\nr1,A.,B.,1,=x,gpt,1\nr2,C.,D.,,,t5,2\nr3,E.,F.,0,x,,3\n"
    import_pairs(campaign, corpus, filename="systems.csv")
    first = tmp_path / "first.csv"
    write_csv(pairs_with_scores(campaign)[0], first)
    copy = Campaign.objects.create(slug="copy", name="Copy")

    import_pairs(copy, first.read_bytes(), filename=first.name)
    second = tmp_path / "second.csv"
    write_csv(pairs_with_scores(copy)[0], second)

    assert second.read_text(encoding="utf-8") == first.read_text(encoding="utf-8")
    header = first.read_text(encoding="utf-8").splitlines()[0].split(",")
    assert header == [*PAIR_COLUMNS, "system", "extra", "note"]
    assert list(copy.pairs.filter(is_training=False).values_list("metadata__system", flat=True)) == ["gpt", "t5", ""]


def test_the_pairs_export_names_a_pair_without_corpus_after_its_campaign_as_the_report_does(campaign):
    add_pairs(campaign, 2, corpus="")
    exported = pairs_frame(campaign)
    assert exported["corpus"].tolist() == ["demo", "demo"]
    assert exported["corpus"].tolist() == load_frames([campaign]).pairs["corpus"].tolist()

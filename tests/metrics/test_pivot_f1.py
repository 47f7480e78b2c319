"""pivot_f1 on PEM's worked example (section 4.3) with the hand-made table fixtures/pem_phrase_table.txt.

The table (written for this project, English side Porter-stemmed as in section 6.1) holds
"Morning , sir ." as one phrase translated "Bonjour , monsieur ." and "Hello ," translated
"Bonjour ," (0.9) or "Salut ," (0.1); "Querrien" is unknown. Counts sum to T = 134.
"""

from pathlib import Path

import pytest

from metrics.base import MetricUnavailable
from metrics.pivot_f1 import PivotF1, bpng, confusion_network, read_phrase_table, segment

TABLE = Path(__file__).resolve().parents[2] / "fixtures" / "pem_phrase_table.txt"
HELLO, MORNING = "Hello , Querrien .", "Morning , sir ."


def test_it_segments_the_papers_sentences_as_the_paper_does():
    table = read_phrase_table(TABLE, min_edge=0)
    # log Pr of "hello , | querrien | ." = log(10/134) + log(0.5/134) + log(50/134) beats every split.
    assert segment(["hello", ",", "querrien", "."], table) == [("hello", ","), ("querrien",), (".",)]
    assert segment(["morn", ",", "sir", "."], table) == [("morn", ",", "sir", ".")]


def test_it_builds_the_papers_bag_of_pivot_ngrams():
    table = read_phrase_table(TABLE, min_edge=0)
    bag = bpng(HELLO, table)
    # The unknown word is its own pivot, as the sentence's words are: Porter-stemmed, so lower-cased.
    expected = {
        ("Bonjour",): 0.9, ("Salut",): 0.1, (",",): 1.0, ("querrien",): 1.0, (".",): 1.0,
        ("Bonjour", ","): 0.9, ("Salut", ","): 0.1, (",", "querrien"): 1.0, ("querrien", "."): 1.0,
        ("Bonjour", ",", "querrien"): 0.9, ("Salut", ",", "querrien"): 0.1, (",", "querrien", "."): 1.0,
        ("Bonjour", ",", "querrien", "."): 0.9, ("Salut", ",", "querrien", "."): 0.1,
    }  # fmt: skip
    assert bag == pytest.approx(expected)
    assert sum(bpng(MORNING, table).values()) == pytest.approx(10.0)  # 4 + 3 + 2 + 1 n-grams of weight 1


def test_it_gives_the_papers_38_percent_with_every_edge_kept():
    # Numerators 0.9 + 1 + 1 + 0.9 (Bonjour, comma, period, Bonjour comma), denominators 10: F1 = 0.38.
    metric = PivotF1(phrase_table=str(TABLE), min_edge=0)
    assert metric.score(sources=[MORNING], hypotheses=[HELLO]) == [pytest.approx(0.38)]
    assert metric.score(sources=[HELLO], hypotheses=[MORNING]) == [pytest.approx(0.38)]  # symmetric


def test_at_the_section_6_defaults_the_edge_of_exactly_0_1_is_pruned():
    # "Salut ," (0.1) is not higher than 0.1: Hello's bag loses 0.1 per n-gram holding Salut's comma
    # path (weights 3.8 + 2.8 + 1.8 + 0.9 = 9.3); shared 0.9 + 0.9 + 1 + 0.9 = 3.7; F1 = 2*3.7/(10+9.3).
    metric = PivotF1(phrase_table=str(TABLE))
    assert metric.score(sources=[MORNING], hypotheses=[HELLO]) == [pytest.approx(7.4 / 19.3)]
    assert metric.signature()["edge"] == ">0.1" and metric.signature()["ngram"] == ">0.01"


def test_an_unknown_sentence_is_its_own_pivot_and_identical_sentences_score_one():
    metric = PivotF1(phrase_table=str(TABLE))
    assert metric.score(sources=["Querrien sings"], hypotheses=["Querrien sings"]) == [1.0]
    assert metric.score(sources=["Querrien sings"], hypotheses=["Morning , sir ."]) == [0.0]


def test_a_phrase_whose_edges_were_all_pruned_breaks_the_network():
    table = read_phrase_table(TABLE, min_edge=0.95)  # drops "Bonjour ," (0.9) and "Salut ," (0.1)
    network = confusion_network(segment(["hello", ",", "querrien"], table), table)
    assert network == [[], [(("querrien",), 1.0)]]


def test_it_reads_a_table_whose_english_side_is_the_source(tmp_path):
    swapped = tmp_path / "en-fr.txt"
    lines = []
    for line in TABLE.read_text().splitlines():
        french, english, scores, _alignment, counts = (field.strip() for field in line.split("|||"))
        s = scores.split()
        c = counts.split()
        lines.append(f"{english} ||| {french} ||| {s[2]} {s[3]} {s[0]} {s[1]} ||| 0-0 ||| {c[1]} {c[0]} {c[2]}")
    swapped.write_text("\n".join(lines) + "\n")
    metric = PivotF1(phrase_table=str(swapped), english_side="source", min_edge=0)
    assert metric.score(sources=[MORNING], hypotheses=[HELLO]) == [pytest.approx(0.38)]


def test_without_a_table_it_says_it_is_unavailable_and_names_the_setting(monkeypatch, tmp_path):
    monkeypatch.delenv("PARASOL_PEM_PHRASE_TABLE", raising=False)
    with pytest.raises(MetricUnavailable, match="PARASOL_PEM_PHRASE_TABLE"):
        PivotF1()
    with pytest.raises(MetricUnavailable, match="not a readable file"):
        PivotF1(phrase_table=str(tmp_path / "missing.txt"))
    broken = tmp_path / "broken.txt"
    broken.write_text("Bonjour ||| hello ||| 1 1 1 1\n")
    with pytest.raises(MetricUnavailable, match="line 1"):
        PivotF1(phrase_table=str(broken))


def test_its_signature_names_the_table_by_content():
    signature = PivotF1(phrase_table=str(TABLE)).signature()
    assert signature["metric"] == "pivot_f1" and signature["table"].startswith("sha256-")
    assert signature["stem"].startswith("porter") and signature["english"] == "target"

import pytest

from metrics import LOWER, get_metric

CASES = [
    # source, hypothesis, expected: edits / length of the longer string
    ("kitten", "sitting", 3 / 7),
    ("flaw", "lawn", 2 / 4),
    ("The cat is alive", "The cat was alive", 2 / 17),  # "is" -> "was": insert w, i -> a,
    ("same", "same", 0.0),
    ("abc", "", 1.0),
    ("", "", 0.0),
]


@pytest.fixture(scope="module")
def lev():
    return get_metric("lev")


@pytest.mark.parametrize(("source", "hypothesis", "expected"), CASES)
def test_it_normalises_by_the_longer_string(lev, source, hypothesis, expected):
    assert lev.score(sources=[source], hypotheses=[hypothesis]) == [pytest.approx(expected)]


def test_it_scores_a_batch_in_order(lev):
    sources, hypotheses, expected = zip(*CASES)
    assert lev.score(sources=sources, hypotheses=hypotheses) == pytest.approx(list(expected))


def test_it_is_symmetric_and_lower_means_closer(lev):
    assert lev.direction == LOWER
    assert lev.score(sources=["kitten"], hypotheses=["sitting"]) == lev.score(
        sources=["sitting"], hypotheses=["kitten"]
    )


def test_it_takes_keyword_arguments_only(lev):
    with pytest.raises(TypeError):
        lev.score(["a"], ["b"])


def test_it_rejects_lists_of_different_lengths(lev):
    with pytest.raises(ValueError, match="2 sources but 1 hypotheses"):
        lev.score(sources=["a", "b"], hypotheses=["a"])


def test_it_rejects_non_strings(lev):
    with pytest.raises(TypeError):
        lev.score(sources=[None], hypotheses=["a"])


def test_it_returns_nothing_for_no_pairs(lev):
    assert lev.score(sources=[], hypotheses=[]) == []


def test_its_signature_names_the_implementation(lev):
    signature = lev.signature()
    assert signature["metric"] == "lev"
    assert signature["impl"].startswith("rapidfuzz-")
    assert lev.signature_string().startswith("metric:lev|version:")


@pytest.mark.parametrize(("source", "hypothesis", "expected"), CASES)
def test_it_equals_nltks_edit_distance_over_the_longer_length(lev, source, hypothesis, expected):
    # The independent check of the metric card: nltk's own dynamic programme, unit costs.
    from nltk.metrics.distance import edit_distance

    longest = max(len(source), len(hypothesis))
    independent = edit_distance(source, hypothesis) / longest if longest else 0.0
    assert lev.score(sources=[source], hypotheses=[hypothesis]) == [pytest.approx(independent, abs=1e-15)]

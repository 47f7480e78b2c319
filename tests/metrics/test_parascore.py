import pytest

from metrics import HIGHER, get_metric
from metrics.parascore import diversity

# source, hypothesis, character edits / longer length, counted by hand
PAIRS = [
    ("He can't take the joke", "He can't take the joker", 1 / 23),
    ("kitten", "sitting", 3 / 7),
    ("The house is big.", "The house is large.", 4 / 19),  # b->l, i->a, +r, g kept, +e
    ("cat", "dog", 3 / 3),
    ("Same.", "Same.", 0.0),
]


@pytest.fixture(scope="module")
def bertscore():
    return get_metric("bertscore", device="cpu")


@pytest.fixture(scope="module")
def parascore(bertscore):
    return get_metric("parascore", bertscore=bertscore)


@pytest.mark.parametrize(
    ("distance", "expected"),
    [(0.0, -1.0), (0.1, -1 + (1.35 / 0.35) * 0.1), (0.175, -0.325), (0.35, 0.35), (0.9, 0.35), (1.0, 0.35)],
)
def test_the_diversity_term_follows_the_paper(distance, expected):
    assert diversity(distance) == pytest.approx(expected)


def test_it_adds_the_diversity_bonus_to_bertscore(parascore, bertscore):
    sources, hypotheses, distances = zip(*PAIRS)
    similarities = bertscore.score(sources=sources, hypotheses=hypotheses)
    expected = [
        similarity + 0.05 * (0.35 if d >= 0.35 else -1 + (1.35 / 0.35) * d)
        for similarity, d in zip(similarities, distances)
    ]
    assert parascore.score(sources=sources, hypotheses=hypotheses) == pytest.approx(expected, abs=1e-9)


def test_a_copy_is_penalised_below_its_bertscore(parascore):
    [value] = parascore.score(sources=["Same."], hypotheses=["Same."])
    assert value == pytest.approx(1.0 - 0.05, abs=1e-5)
    assert parascore.direction == HIGHER
    assert parascore.signature()["omega"] == "0.05"

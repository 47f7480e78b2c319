import pytest

from metrics import MetricUnavailable, get_metric
from metrics.wordnet import SETUP_COMMAND, install_wordnet, load_wordnet

# nltk's meteor_score docstring: hypothesis1 against reference1 gives 0.6944.
NLTK_HYPOTHESIS = "It is a guide to action which ensures that the military always obeys the commands of the party"
NLTK_REFERENCE = "It is a guide to action that ensures that the military will forever heed Party commands"


@pytest.fixture(scope="module")
def nltk_data(tmp_path_factory):
    # The setup command's own function, into a private directory: the test needs
    # only the Debian packages, not a prior `python -m metrics.wordnet`.
    data_dir = tmp_path_factory.mktemp("nltk_data")
    install_wordnet(data_dir)
    return data_dir


@pytest.fixture(scope="module")
def meteor(nltk_data):
    return get_metric("meteor", nltk_data=str(nltk_data))


def test_it_reproduces_nltks_docstring_value(meteor):
    [value] = meteor.score(sources=[NLTK_REFERENCE], hypotheses=[NLTK_HYPOTHESIS])
    assert round(value, 4) == 0.6944


@pytest.mark.parametrize(
    ("source", "hypothesis", "expected"),
    [
        ("this is a cat", "non matching hypothesis", 0.0),  # nltk's second docstring value
        ("He is happy", "He is happy", 0.9814814814814815),  # fragmentation penalty even when identical
    ],
)
def test_it_matches_known_values(meteor, source, hypothesis, expected):
    assert meteor.score(sources=[source], hypotheses=[hypothesis]) == [pytest.approx(expected)]


def test_it_matches_synonyms_through_wordnet(meteor):
    # nltk looks synonyms up after Porter stemming, so only stem-stable words such
    # as "car"/"auto" match ("happy" becomes "happi" and never meets "glad").
    [synonym] = meteor.score(sources=["car"], hypotheses=["auto"])
    [stemmed] = meteor.score(sources=["happy"], hypotheses=["glad"])
    assert synonym == pytest.approx(0.5) and stemmed == 0  # one match, one chunk: fmean 1, penalty 0.5


def test_setup_is_idempotent_and_writes_lexnames(nltk_data):
    corpus = install_wordnet(nltk_data)
    before = {path.name: path.stat().st_mtime_ns for path in corpus.iterdir()}
    install_wordnet(nltk_data)
    assert {path.name: path.stat().st_mtime_ns for path in corpus.iterdir()} == before
    lines = (corpus / "lexnames").read_text().splitlines()
    assert len(lines) == 45 and lines[0] == "00\tadj.all\t3" and lines[44] == "44\tadj.ppl\t3"
    assert load_wordnet(str(nltk_data)).get_version() == "3.0"


def test_it_names_the_setup_command_when_wordnet_is_missing(tmp_path):
    with pytest.raises(MetricUnavailable, match=SETUP_COMMAND.replace(".", r"\.")):
        get_metric("meteor", nltk_data=str(tmp_path))


# Hand-checked with nltk's rules (exact, stem, synonym matching; chunks counted over
# the alignment nltk picks, scanning both token lists from the end):
# fmean = P*R / (0.9*P + 0.1*R), penalty = 0.5 * (chunks / matches)**3.
@pytest.mark.parametrize(
    ("source", "hypothesis", "treebank", "whitespace"),
    [
        # 5 tokens "the cat is alive ." all matched in one chunk: 1 - 0.5*(1/5)**3;
        # on whitespace 4 tokens: 1 - 0.5*(1/4)**3.
        ("The cat is alive.", "The cat is alive.", 0.996, 0.9921875),
        # hello , world ! against hello world: P 1, R 1/2, fmean 0.5/0.95, 2 chunks of 2
        # matches, penalty 0.5. Glued to punctuation, "hello," never meets "hello".
        ("Hello, world!", "Hello world", 0.5 / 0.95 * 0.5, 0.0),
        # 7 of 8 hypothesis tokens match (the comma does not), R 1: fmean 0.875/0.8875;
        # 6 chunks for 7 matches: penalty 0.5*(6/7)**3.
        # On whitespace "mat," and "sat." match nothing: 4 of 6 each way, 4 chunks: (2/3) * 0.5.
        ("The cat sat on the mat.", "On the mat, the cat sat.", 0.875 / 0.8875 * (1 - 0.5 * (6 / 7) ** 3), 1 / 3),
    ],
)
def test_it_splits_punctuation_with_treebank_tokens(nltk_data, meteor, source, hypothesis, treebank, whitespace):
    glued = get_metric("meteor", nltk_data=str(nltk_data), tokenizer="whitespace")
    assert meteor.score(sources=[source], hypotheses=[hypothesis]) == [pytest.approx(treebank, abs=1e-9)]
    assert glued.score(sources=[source], hypotheses=[hypothesis]) == [pytest.approx(whitespace, abs=1e-9)]


def test_it_refuses_an_unknown_tokenizer(nltk_data):
    with pytest.raises(ValueError, match="tokenizer must be one of"):
        get_metric("meteor", nltk_data=str(nltk_data), tokenizer="spaces")


def test_its_signature_names_tokenisation_and_wordnet(nltk_data, meteor):
    # Version 2 = Treebank tokens: scores stored under version 1 (whitespace) are never reused.
    assert meteor.signature()["version"] == "2"
    assert meteor.signature()["tok"] == "nltk-treebank-word_tokenize"
    assert meteor.signature()["wordnet"] == "3.0"
    glued = get_metric("meteor", nltk_data=str(nltk_data), tokenizer="whitespace")
    assert glued.signature()["tok"] == "whitespace" and glued.signature_string() != meteor.signature_string()

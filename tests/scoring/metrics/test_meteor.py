import pytest

from scoring.metrics import MetricUnavailable, get_metric
from scoring.metrics.wordnet import SETUP_COMMAND, install_wordnet, load_wordnet

# nltk's meteor_score docstring: hypothesis1 against reference1 gives 0.6944.
NLTK_HYPOTHESIS = "It is a guide to action which ensures that the military always obeys the commands of the party"
NLTK_REFERENCE = "It is a guide to action that ensures that the military will forever heed Party commands"


@pytest.fixture(scope="module")
def nltk_data(tmp_path_factory):
    # The setup command's own function, into a private directory: the test needs
    # only the Debian packages, not a prior `python -m scoring.metrics.wordnet`.
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


def test_its_signature_names_tokenisation_and_wordnet(meteor):
    assert meteor.signature()["tok"] == "whitespace"
    assert meteor.signature()["wordnet"] == "3.0"

import json
from importlib import import_module

import pytest
from django.apps import apps as django_apps

from campaigns.importers import CorpusImportError, import_pairs
from campaigns.models import Pair
from metrics.words import TOKENISATION, word_tokens


def test_it_stores_the_words_of_both_sentences_at_import(campaign):
    import_pairs(campaign, b'{"source": "He didn\'t go.", "hypothesis": "She stayed home, well-rested."}\n')
    pair = campaign.real_pairs.get()
    assert pair.tokens == {"source": ["He", "didn't", "go", "."], "hypothesis": word_tokens(pair.hypothesis)}
    assert pair.words("hypothesis") == ["She", "stayed", "home", ",", "well-rested", "."]


def test_it_gives_older_pairs_their_tokens_on_first_use(campaign):
    pair = Pair.build(campaign, external_id="old", source="A cat sat.", hypothesis="A dog ran.")
    pair.tokens = {}
    pair.save()
    assert pair.words("source") == ["A", "cat", "sat", "."]
    assert Pair.objects.get(pk=pair.pk).tokens["hypothesis"] == ["A", "dog", "ran", "."]


def test_the_migration_fills_tokens_of_existing_pairs(campaign):
    pair = Pair.build(campaign, external_id="old", source="One two.", hypothesis="Three.")
    pair.tokens = {}
    pair.save()
    migration = import_module("campaigns.migrations.0011_pair_tokens")
    migration.store_tokens(django_apps, None)
    assert Pair.objects.get(pk=pair.pk).tokens == {"source": ["One", "two", "."], "hypothesis": ["Three", "."]}


def test_new_pairs_record_the_tokenisation_that_made_their_words(campaign):
    import_pairs(campaign, b'{"source": "It cost A$4.56.", "hypothesis": "Up 4.4%."}\n')
    pair = campaign.real_pairs.get()
    assert pair.tokenisation == TOKENISATION
    assert pair.words("source") == ["It", "cost", "A$4.56", "."]
    assert pair.words("hypothesis") == ["Up", "4.4%", "."]


def test_a_tagging_over_older_words_is_read_back_over_those_words(campaign):
    """An export of a campaign tokenised by version 1 imports with its words, never re-split under its tags."""
    source, hypothesis = "It cost A$4.56.", "Up 4.4%."
    old = {"source": word_tokens(source, 1), "hypothesis": word_tokens(hypothesis, 1)}
    line = {"source": source, "hypothesis": hypothesis}
    for side in ("source", "hypothesis"):
        line |= {f"{side}_tokens": old[side], f"{side}_tags": [1] + [0] * (len(old[side]) - 1)}
    import_pairs(campaign, json.dumps(line).encode() + b"\n")
    pair = campaign.real_pairs.get()
    assert (pair.tokenisation, pair.tokens) == (1, old)
    assert pair.gold_tags["source"] == [1, 0, 0, 0, 0, 0, 0, 0]  # It cost A $ 4 . 56 .


def test_a_tagging_over_words_no_tokenisation_makes_is_refused(campaign):
    line = {"source": "A$4.56", "hypothesis": "x", "source_tokens": ["A$", "4.56"], "source_tags": [0, 1]}
    line |= {"hypothesis_tokens": ["x"], "hypothesis_tags": [0]}
    with pytest.raises(CorpusImportError, match="source_tokens differ from Parasol's words: A\\$4.56"):
        import_pairs(campaign, json.dumps(line).encode() + b"\n")


def test_the_migration_keeps_version_1_words_for_existing_pairs(campaign):
    pair = Pair.build(campaign, external_id="old", source="A$4.56", hypothesis="4.4%")
    pair.tokens = {}
    pair.save()
    import_module("campaigns.migrations.0011_pair_tokens").store_tokens(django_apps, None)
    assert Pair.objects.get(pk=pair.pk).tokens == {
        "source": ["A", "$", "4", ".", "56"],
        "hypothesis": ["4", ".", "4", "%"],
    }

from importlib import import_module

from django.apps import apps as django_apps

from campaigns.importers import import_pairs
from campaigns.models import Pair
from scoring.metrics.words import word_tokens


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

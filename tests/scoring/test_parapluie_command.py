"""manage.py parapluie: the verdict follows the one threshold-0 rule and names the answer setting."""

import pytest
from django.core.management import call_command

from metrics.base import called_paraphrase
from metrics.registry import METRICS, get_metric_class, natural_threshold_of
from scoring import service
from scoring.management.commands.parapluie import TEMPLATES


@pytest.mark.parametrize("answer", ["Yes/No", "yes/no"])
def test_it_prints_the_score_the_rule_verdict_and_the_answer_setting(monkeypatch, capsys, answer):
    monkeypatch.setenv("PARAPLUIE_ANSWER", answer)
    service.scorer.cache_clear()
    try:
        call_command("parapluie", "The cat is alive.", "The cat was alive.")
        scorer = service.scorer("parapluie_direct")
    finally:
        service.scorer.cache_clear()
    line = capsys.readouterr().out.strip()
    value = scorer.score(sources=["The cat is alive."], hypotheses=["The cat was alive."])[0]
    verdict = "paraphrase" if called_paraphrase(value, 0.0, "higher") else "not a paraphrase"
    assert line.startswith(f"{value:.4f}  ({verdict} at threshold 0; answer {answer}:")


def test_a_score_of_exactly_zero_is_a_paraphrase():
    # The paper (5.2) calls "others" than those under the threshold paraphrases.
    threshold = natural_threshold_of("parapluie_direct")
    assert threshold == 0.0
    assert called_paraphrase(0.0, threshold, "higher")
    assert not called_paraphrase(-1e-12, threshold, "higher")
    assert called_paraphrase(0.3, 0.3, "lower") and not called_paraphrase(0.31, 0.3, "lower")


def test_each_class_reads_its_natural_threshold_from_the_registry():
    for name, entry in METRICS.items():
        assert get_metric_class(name).natural_threshold == entry.natural_threshold, name
    assert all(natural_threshold_of(name) == 0.0 for name in TEMPLATES.values())  # the paper's, 3.1
    assert natural_threshold_of("lev") is None and natural_threshold_of("no_such_metric") is None

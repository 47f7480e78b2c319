import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from django.core.management import CommandError, call_command
from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score

from campaigns.importers import import_pairs
from campaigns.models import Score
from metrics.registry import get_metric
from tests.pdflatex import compile_latex, needs_pdflatex

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "mrpc_sample.tsv"


def score_pairs(campaign, metric_name):
    metric = get_metric(metric_name)
    pairs = list(campaign.real_pairs.order_by("pk"))
    values = metric.score(sources=[p.source for p in pairs], hypotheses=[p.hypothesis for p in pairs])
    Score.objects.bulk_create(
        Score(pair=pair, metric=metric_name, signature=metric.signature_string(), value=value)
        for pair, value in zip(pairs, values)
    )
    return pd.Series(values, index=[p.external_id for p in pairs])


def best_by_brute_force(scores, labels, direction):
    """The a-posteriori threshold scanned one value at a time with sklearn (strictest among equal accuracies)."""
    best = None
    for t in sorted(set(scores), reverse=direction == "higher"):
        predicted = scores >= t if direction == "higher" else scores <= t
        accuracy = accuracy_score(labels, predicted)
        if best is None or accuracy > best[1]:
            best = (
                t,
                accuracy,
                f1_score(labels, predicted),
                recall_score(labels, predicted),
                precision_score(labels, predicted, zero_division=0),
            )
    return best


@pytest.fixture
def scored_campaign(campaign):
    import_pairs(campaign, FIXTURE.read_bytes(), format="mrpc")
    scores = {name: score_pairs(campaign, name) for name in ("lev", "bleu")}
    gold = pd.Series({p.external_id: p.gold_label for p in campaign.real_pairs})
    return campaign, scores, gold


def test_it_reproduces_tables_1_and_3_on_a_gold_labelled_mrpc_sample(scored_campaign, tmp_path):
    campaign, scores, gold = scored_campaign
    call_command("report", campaign.slug, "--label-source", "gold", "--out", str(tmp_path), "--no-figures")
    table1 = pd.read_csv(tmp_path / "table1.csv").set_index(["metric", "corpus", "label"])
    table3 = pd.read_csv(tmp_path / "table3.csv")
    for metric, direction in (("lev", "lower"), ("bleu", "higher")):
        values = scores[metric]
        for value, name in ((1, "paraphrase"), (0, "non_paraphrase")):
            chosen = values[gold[values.index] == value].to_numpy()
            row = table1.loc[(metric, "MRPC", name)]
            assert row["mean"] == pytest.approx(np.mean(chosen))
            assert row["std"] == pytest.approx(np.std(chosen, ddof=1))
            assert row["n"] == 10 and row["direction"] == direction
        labels = gold[values.index].to_numpy(dtype=int)
        threshold, accuracy, f1, recall, precision = best_by_brute_force(values.to_numpy(), labels, direction)
        row = table3[(table3["metric"] == metric) & (table3["corpus"] == "MRPC")].iloc[0]
        assert row["threshold_kind"] == "a_posteriori"
        assert (row["threshold"], row["accuracy"], row["f1"], row["recall"], row["precision"]) == pytest.approx(
            (threshold, accuracy, f1, recall, precision)
        )


def test_it_writes_every_table_and_figure(scored_campaign, tmp_path):
    campaign, _, _ = scored_campaign
    call_command("report", campaign.slug, "--label-source", "gold", "--out", str(tmp_path))
    names = {path.name for path in tmp_path.iterdir()}
    expected = {
        "table1.csv",
        "table2.csv",
        "table3.csv",
        "table4.csv",
        "eer.csv",
        "labels.csv",
        "agreement.csv",
        "auc.csv",
        "figure2.png",
        "figure2_mrpc.png",
        "thresholds_global.png",
        "ranks_mrpc.png",
        "signatures.csv",
        "notes.txt",
    }
    assert expected <= names
    signatures = pd.read_csv(tmp_path / "signatures.csv").set_index("metric")
    assert signatures.loc["lev", "direction"] == "lower" and signatures.loc["bleu", "signature"].startswith(
        "metric:bleu"
    )


def test_it_names_a_missing_campaign(db, tmp_path):
    with pytest.raises(CommandError, match="no campaign with slug nowhere"):
        call_command("report", "nowhere", "--out", str(tmp_path))


def test_it_refuses_a_campaign_without_pairs(campaign, tmp_path):
    with pytest.raises(CommandError, match="no pairs to report on"):
        call_command("report", campaign.slug, "--out", str(tmp_path))


def test_latex_and_html_exports_hold_every_table_the_figures_as_pdf_and_no_external_reference(
    scored_campaign, tmp_path
):
    campaign, _, _ = scored_campaign
    call_command("report", campaign.slug, "--label-source", "gold", "--out", str(tmp_path), "--latex", "--html")
    for name in ("table1", "table2", "table3", "table4", "eer", "auc"):
        tex = (tmp_path / f"{name}.tex").read_text(encoding="utf-8")
        assert tex.count("\\toprule") == 1 and tex.count("\\bottomrule") == 1 and f"\\label{{tab:{name}}}" in tex
    assert "\\textbf{" in (tmp_path / "table3.tex").read_text(encoding="utf-8")
    for stem in ("figure2", "thresholds_global", "ranks_mrpc"):
        assert (tmp_path / f"{stem}.pdf").read_bytes().startswith(b"%PDF")
        assert (tmp_path / f"{stem}.svg").read_text(encoding="utf-8").lstrip().startswith("<?xml")
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert_self_contained(page)
    assert page.count('src="data:image/png;base64,') == len(list(tmp_path.glob("*.png")))
    assert "Appendix A: metric signatures" in page and "metric:bleu" in page
    assert "Judgments wanted per pair" in page and "Lev. ↓" in page


def assert_self_contained(page):
    """No attribute fetches or links outside the file: no http(s) or protocol-relative src/href, no stylesheet link."""
    import re

    references = re.findall(r"""\b(?:src|href)\s*=\s*["']?([^"'\s>]+)""", page, flags=re.IGNORECASE)
    external = [r for r in references if not (r.startswith("#") or r.startswith("data:"))]
    assert external == [], external
    assert not re.search(r"<link\b|<script\b[^>]*\bsrc|@import|url\((?!['\"]?data:)", page, flags=re.IGNORECASE)


@needs_pdflatex
def test_the_exported_tables_compile_in_a_standard_article(scored_campaign, tmp_path):
    campaign, _, _ = scored_campaign
    call_command("report", campaign.slug, "--label-source", "gold", "--out", str(tmp_path), "--latex", "--no-figures")
    compile_latex(tmp_path, "tables")
    assert (tmp_path / "tables.pdf").read_bytes().startswith(b"%PDF")


def test_the_demo_campaign_exports_latex_tables_pdf_figures_and_one_html_file(db, tmp_path, settings):
    from campaigns.models import Campaign

    settings.DEBUG = True  # load_demo creates its published-password account only in a local demo
    call_command("load_demo", stdout=io.StringIO())
    demo = Campaign.objects.get(slug="demo")
    for name in ("lev", "bleu"):
        score_pairs(demo, name)
    call_command("report", "demo", "--label-source", "gold", "--out", str(tmp_path), "--latex", "--html")
    assert {"table1.tex", "table3.tex", "auc.tex", "tables.tex", "figure2.pdf", "thresholds_demo.pdf"} <= {
        path.name for path in tmp_path.iterdir()
    }
    # Gold labels only: the judges' sections are left out of the LaTeX, as they are of the page.
    assert not (tmp_path / "agreement.tex").exists() and not (tmp_path / "labels.tex").exists()
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert_self_contained(page)
    assert "No judgments yet: agreement appears once two judges share a pair." in page


def test_csv_comments_name_each_column_and_metric_in_words_and_leave_the_data_as_is(scored_campaign, tmp_path):
    campaign, _scores, _gold = scored_campaign
    plain, annotated = tmp_path / "plain", tmp_path / "annotated"
    common = [campaign.slug, "--label-source", "gold", "--no-figures", "--out"]
    call_command("report", *common, str(plain))
    call_command("report", *common, str(annotated), "--csv-comments")
    text = (annotated / "table3.csv").read_text(encoding="utf-8")
    comments = [line for line in text.splitlines() if line.startswith("# ")]
    assert comments[0].startswith("# Table 3")
    assert "# metric lev: Lev. ↓" in comments and "# column accuracy: Acc." in comments
    assert not (plain / "table3.csv").read_text(encoding="utf-8").startswith("#")
    pd.testing.assert_frame_equal(pd.read_csv(annotated / "table3.csv", comment="#"), pd.read_csv(plain / "table3.csv"))

"""The words a reader sees for the analysis' internal names, behind one lookup: `title_for`.

The names are defined where they are made (metrics in the metric registry, answers and
classes in the similarity scale, agreement statistics in `agreement`); this module only
gathers them, so the report page, the LaTeX tables and the one-file report agree.
"""

from annotation.tasktypes.similarity.scale import ANSWER_TITLES
from annotation.votes import PARAPHRASE_TITLES
from metrics.registry import title_of
from reports.analysis.agreement import STATISTIC_TITLES
from reports.analysis.common import ARROW

# Column names of the tidy tables, as a table's header shows them.
COLUMN_TITLES = {
    "corpus": "Corpus",
    "metric": "Metric",
    "metric_a": "Metric A",
    "metric_b": "Metric B",
    "n": "n",
    "n_paraphrase": "n P.",
    "n_non_paraphrase": "n Not P.",
    "auc": "AUC",
    "auc_a": "AUC A",
    "auc_b": "AUC B",
    "difference": "Difference",
    "p_value": "p",
    "n_bootstrap": "Bootstrap draws",
    "threshold": "Threshold",
    "accuracy": "Acc.",
    "f1": "F1",
    "recall": "Recall",
    "precision": "Precision",
    "eer": "EER",
    "english_level": "English level",
    "n_judges": "Judges",
    "n_judgments": "Judgments",
    "share_dont_know": "Share of Don't know",
    "mean_ordinal": "Mean answer (1–4)",
    "agreement_with_gold": "Agreement with gold",
    "n_with_gold": "n (gold)",
    "agreement_with_others": "Agreement with the others",
    "n_with_others": "n (others)",
    "judge_a": "Judge A",
    "judge_b": "Judge B",
    "n_shared": "Shared pairs",
    "observed_agreement": "Observed agreement",
    "kappa": "Cohen's κ",
    "group_by": "Grouped by",
    "group": "Group",
    "mean_score": "Mean score",
    "best_accuracy": "Best acc.",
    "spearman_rho": "Spearman ρ",
    "kendall_tau": "Kendall τ",
    "generator": "Generator",
    "rank": "Rank",
    "score": "Score",
    "all": "All levels",
    "template": "Template",
    "a_posteriori": "Best threshold",
    "a_priori": "Threshold 0",
    "human": "Judges' majority",
    "phi_or": "Checker φ (or)",
    "phi_and": "Checker φ (and)",
    "no_check": "No check",
    "gold": "Gold",
    "dawid_skene": "Dawid–Skene",
    "mace": "MACE",
    # The meta-evaluation (reports.analysis.meta).
    "pairwise_accuracy": "Pairwise accuracy",
    "soft_pairwise_accuracy": "Soft pairwise accuracy",
    "acc_eq": "Pairwise accuracy with ties (acc-eq)",
    "statistic": "Statistic",
    "significant": "Significant",
    "method": "Method",
    "unit": "Resampled",
    "correction": "Correction",
    "pearson_by_item": "Pearson (by item)",
    "kendall_by_item": "Kendall τ (by item)",
    "value_a": "Value A",
    "value_b": "Value B",
    "p_adjusted": "p (corrected)",
    "n_votes": "Votes",
    "dawid_skene_sensitivity": "Dawid–Skene sensitivity",
    "dawid_skene_specificity": "Dawid–Skene specificity",
    "dawid_skene_accuracy": "Dawid–Skene accuracy",
    "mace_competence": "MACE competence",
    "n_resamples": "Resamples",
    # Systems (reports.analysis.systems).
    "system": "System",
    "n_pairs": "Pairs",
    "n_labelled": "Labelled",
    "paraphrase_rate": "Paraphrase rate",
    "n_systems": "Systems",
    "system_a": "System A",
    "system_b": "System B",
    "n_sources": "Shared sources",
    "mean_difference": "Mean difference (A − B)",
    "n_a_better": "Sources A better",
    "n_b_better": "Sources B better",
    "p_sign": "p (sign test)",
    "p_bootstrap": "p (bootstrap)",
    "pearson": "Pearson r",
    "spearman": "Spearman ρ",
    "kendall": "Kendall τ",
    # PEM's criteria (reports.analysis.criteria).
    "criterion": "Criterion",
    "row": "Criterion",
    "mean": "Mean",
    "std": "SD",
    "sentence_level": "Sentence level",
    "system_level": "System level",
    "n_judge_pairs": "Judge pairs",
    "alpha_interval": "Krippendorff's α (interval)",
    "folds": "Folds",
    "metrics": "Metrics",
    "features": "Features",
    "split": "Split",
    "reference": "Reference",
    "adequacy": "Adequacy",
    "fluency": "Fluency",
    "dissimilarity": "Dissimilarity",
    "overall": "Overall",
    # Span tagging (reports.analysis.spans).
    "judge": "Judge",
    "n_words": "Words",
    "span_f1": "Span F1",
    "word_accuracy": "Word accuracy",
    "against": "Against",
    "pair_id": "Pair",
    "n_taggings": "Taggings",
    "source_share": "Source share",
    "hypothesis_share": "Hypothesis share",
    "tagged_share": "Tagged share",
    "has_span": "Has a span",
    "mean_tagged_share": "Mean tagged share",
    "median_tagged_share": "Median tagged share",
    "share_with_span": "Share with a span",
    "kappa_is": "Kappa is",
    "within_theta": "Within θ = 0.05",
    "n_within_theta": "Pairs within θ = 0.05",
    "min_span_f1": "Least span F1 kept",
    "n_tested": "Pairs tested",
    "n_discarded": "Discarded",
    "n_kept": "Kept",
    # ParaTag's detector (reports.detector_tables).
    "detector": "Detector",
    "encoder": "Encoder",
    "n_test_pairs": "Test pairs",
    "human_word_accuracy": "Judges' word accuracy",
    "human_span_f1": "Judges' span F1",
    "diff_span_f1": "Span F1 of the diff (tag every different word)",
}
# Values a table may hold that are not names: shown in words, never as Python writes them.
VALUE_TITLES = {True: "Yes", False: "No", None: "–"}
# Every internal name with a title of its own, in one look-up (`title_for`).
NAME_TITLES = {**COLUMN_TITLES, **STATISTIC_TITLES, **PARAPHRASE_TITLES, **ANSWER_TITLES}


def title_for(name) -> str:
    """The reader's word for an internal name; an unknown snake_case name is spelled out ("very_new" → "Very new")."""
    text = str(name)
    if text in NAME_TITLES:
        return NAME_TITLES[text]
    if "_" in text and text == text.lower():
        spelled = text.replace("_", " ")
        return spelled[:1].upper() + spelled[1:]
    return text


def metric_title(metric, direction=None) -> str:
    """The metric's printed name, with its direction's arrow when known ("Lev. ↓")."""
    return f"{title_of(metric)} {ARROW.get(direction, '')}".strip()

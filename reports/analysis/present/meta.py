"""The layouts of the meta-evaluation's tables (`reports.analysis.meta`), each caption naming its paper."""

import pandas as pd

from reports.analysis.vocabulary import metric_title, title_for

from .cells import PRECISION, interval, metric_labels, number
from .shown import Shown, as_is, best_cells, best_in_row, corpus_order, metrics_by_corpus

STATISTIC_TITLES = {
    "auc": "ROC AUC (pairs)",
    "spearman": "Spearman ρ (pairs)",
    "kendall": "Kendall τ (pairs)",
    "pairwise_accuracy": "Pairwise accuracy (systems)",
    "system_pearson": "Pearson r (systems)",
    "system_kendall": "Kendall τ (systems)",
}
METHOD_WORDS = {
    "bootstrap": "paired bootstrap of the difference",
    "permutation": "permutation (perm-both, Deutsch et al. 2021)",
    "DeLong": "DeLong's paired test (above 20,000 labelled pairs)",
    "Meng-Rosenthal-Rubin": "Meng, Rosenthal & Rubin's test of dependent correlations (above 20,000 labelled pairs)",
}
CORRECTION_WORDS = {
    "holm": "Holm's step-down correction",
    "bonferroni": "Bonferroni's correction",
    "none": "no correction",
}


def metric_clusters_layout(report, frame):
    """As WMT's tables: per statistic and corpus, the metrics best first with their cluster (rank), value and
    interval; bold: the top cluster."""
    order = {corpus: i for i, corpus in enumerate(corpus_order(report, frame))}
    statistics = list(STATISTIC_TITLES)
    frame = frame.assign(
        _s=frame["statistic"].map(lambda s: statistics.index(s) if s in statistics else len(statistics)),
        _c=frame["corpus"].map(order),
    ).sort_values(["_s", "_c", "position"], kind="stable")
    index = pd.MultiIndex.from_arrays(
        [
            [STATISTIC_TITLES.get(s, title_for(s)) for s in frame["statistic"]],
            frame["corpus"].astype(str),
            frame["rank"].astype(str),
        ],
        names=["Statistic", "Corpus", "Cluster"],
    )
    table = pd.DataFrame(
        {
            "Metric": metric_labels(report, frame["metric"]),
            "Value [95% CI]": [
                interval(v, lo, hi) for v, lo, hi in zip(frame["value"], frame["ci_low"], frame["ci_high"])
            ],
            "Significantly better": [str(int(n)) for n in frame["n_better"]],
        },
        index=index,
    )
    bold = pd.DataFrame(False, index=index, columns=table.columns)
    bold["Metric"] = (frame["rank"] == 1).to_numpy()
    methods = sorted({f"{METHOD_WORDS.get(m, m)}" for m in frame["method"]})
    resamples = sorted({int(n) for n in frame["n_resamples"] if n})
    units = sorted(set(frame["unit"]))
    correction = CORRECTION_WORDS.get(str(frame["correction"].iloc[0]), str(frame["correction"].iloc[0]))
    caption = (
        "As the WMT tasks show them (Freitag et al. 2022, 2023): best value first; a cluster runs until one is "
        "significantly worse than its first. "
        f"Tests: {'; '.join(methods)}, {' and '.join(units)} resampled"
        f"{', ' + ' or '.join(f'{n:,}' for n in resamples) + ' resamples' if resamples else ''}; {correction} "
        "over every two metrics of a statistic and corpus, at 0.05. System level: pairwise accuracy "
        "(Kocmi et al. 2021), Pearson and Kendall over the systems, sources resampled. Significantly better: "
        f"how many metrics beat this one significantly. Bold: the top cluster. {PRECISION}"
    )
    return Shown(table, bold, caption)


def metric_tests_layout(report, frame):
    """One row per test, its statistic and corpus as the stub (as the clusters' table)."""
    index = pd.MultiIndex.from_arrays(
        [[STATISTIC_TITLES.get(x, title_for(x)) for x in frame["statistic"]], frame["corpus"].astype(str)],
        names=["Statistic", "Corpus"],
    )
    method = frame["method"].map(lambda m: {"bootstrap": "Bootstrap", "permutation": "Permutation"}.get(m, m))
    table = pd.DataFrame(
        {
            title_for("metric_a"): metric_labels(report, frame["metric_a"]),
            title_for("metric_b"): metric_labels(report, frame["metric_b"]),
            title_for("difference"): [number(v) for v in frame["difference"]],
            title_for("p_value"): [number(v) for v in frame["p_value"]],
            title_for("p_adjusted"): [number(v) for v in frame["p_adjusted"]],
            title_for("method"): method.astype(str).to_numpy(),
        },
        index=index,
    )
    bold = pd.DataFrame(False, index=index, columns=table.columns)
    bold[title_for("p_adjusted")] = frame["significant"].fillna(False).to_numpy(bool)
    caption = (
        "Every two metrics of a statistic and corpus: the difference, its two-sided p-value and the p-value "
        "corrected for the family (the method in each row). Bold: significant at 0.05 once corrected. "
        f"{PRECISION}"
    )
    return Shown(table, bold, caption)


def system_accuracy_layout(report, frame):
    index = pd.Index(metric_labels(report, frame["metric"]), name="Metric")
    table = pd.DataFrame(
        {
            "Systems": [str(int(n)) for n in frame["n_systems"]],
            "System pairs": [str(int(n)) for n in frame["n_system_pairs"]],
            "Pairwise accuracy [95% CI]": [
                interval(v, lo, hi)
                for v, lo, hi in zip(
                    frame["pairwise_accuracy"], frame["pairwise_accuracy_ci_low"], frame["pairwise_accuracy_ci_high"]
                )
            ],
            "Soft pairwise accuracy": [number(v) for v in frame["soft_pairwise_accuracy"]],
            "Pearson r": [number(v) for v in frame["system_pearson"]],
            "Kendall τ": [number(v) for v in frame["system_kendall"]],
        },
        index=index,
    )
    bold = pd.DataFrame(False, index=index, columns=table.columns)
    bold["Pairwise accuracy [95% CI]"] = best_in_row(frame["pairwise_accuracy"], "higher")
    bold["Soft pairwise accuracy"] = best_in_row(frame["soft_pairwise_accuracy"], "higher")
    caption = (
        "System-level pairwise accuracy (Kocmi et al. 2021): the share of system pairs the metric orders as the "
        "judges' paraphrase rates do, with its 95% interval over resampled sources; soft pairwise accuracy "
        "(Thompson et al., WMT24): the mean of 1 − |p(judges) − p(metric)| over system pairs, each p the one-sided "
        "bootstrap p-value that the first system is not ahead (the same draws for both). Both sides average the "
        f"same labelled, scored pairs. Bold: the highest of each column. {PRECISION}"
    )
    return Shown(table, bold, caption)


def within_source_layout(report, frame):
    long = frame.melt(
        id_vars=["metric", "corpus"], value_vars=["acc_eq", "pearson_by_item", "kendall_by_item"], var_name="measure"
    )
    epsilons = frame.set_index(["metric", "corpus"])["epsilon"]
    cells = [
        f"{number(v)} (ε {number(epsilons.get((metric, corpus)))})" if measure == "acc_eq" else number(v)
        for v, measure, metric, corpus in zip(long["value"], long["measure"], long["metric"], long["corpus"])
    ]
    table = metrics_by_corpus(report, long, cells, sub="measure")
    values = metrics_by_corpus(report, long, long["value"], sub="measure")
    first = frame.iloc[0]
    caption = (
        f"Over the sources with two or more judged candidates ({int(frame['n_sources'].max())} at most), each "
        "metric against the judges' "
        + ("mean 4-point answer" if first["against"] == "mean_ordinal" else "0/1 label")
        + ": pairwise accuracy with ties (acc-eq) and tie calibration (Deutsch, Foster & Freitag 2023; WMT23): "
        "the share of every two "
        "candidates of one source ordered as the judges order them, a tie being a third order, the metric "
        "calling scores within ε tied at the ε with the best share (fitted here, so optimistic); Pearson and "
        "Kendall τ-b grouped by item (WMT23): computed per source, then averaged over the sources where both "
        f"vary. Bold: the highest of each column. {PRECISION}"
    )
    return Shown(table, best_cells(values, axis=0), caption)


def human_ceiling_layout(report, frame):
    long = frame.melt(id_vars=["predictor", "corpus"], value_vars=["auc", "kappa"], var_name="measure")
    corpora = corpus_order(report, frame)
    predictors = list(dict.fromkeys(frame["predictor"]))
    table = long.assign(cell=long["value"].map(number)).pivot_table(
        index="predictor", columns=["corpus", "measure"], values="cell", aggfunc="first", sort=False
    )
    columns = pd.MultiIndex.from_tuples([(c, m) for c in corpora for m in ("auc", "kappa")])
    table = table.reindex(index=predictors, columns=columns)
    names = [
        "One judge held out" if p == "held_out_judge" else metric_title(p, report.directions.get(p)) for p in predictors
    ]
    table.index = pd.Index(names, name="Predictor")
    table.columns = pd.MultiIndex.from_tuples([(str(c), "AUC" if m == "auc" else "Cohen's κ") for c, m in columns])
    table = table.fillna("–")
    judges = frame.loc[frame["predictor"] == "held_out_judge"]
    n_rows = int(judges["n_rows"].max()) if len(judges) else 0
    caption = (
        "The human ceiling: each judge held out in turn, against the majority of the other judges on the pairs it "
        f"answered ({n_rows} judge-pair rows at most; pairs where the others tie are left out): the AUC of its "
        "4-point answer and Cohen's κ of its vote; each metric on the very same rows, its κ at the threshold "
        f"with the best κ (fitted here, so optimistic for the metric). {PRECISION}"
    )
    return Shown(table, caption=caption)


def calibration_layout(report, frame):
    rows = list(zip(frame["metric"], frame["probability"]))
    index_rows = list(dict.fromkeys(rows))
    corpora = corpus_order(report, frame)
    measures = (("brier", "Brier"), ("ece", "ECE"), ("pr_auc", "PR AUC"))
    cells, values = {}, {}
    for record in frame.to_dict("records"):
        key = (record["metric"], record["probability"])
        for name, title in measures:
            column = (record["corpus"], title)
            cells.setdefault(column, {})[key] = interval(
                record[name], record.get(f"{name}_ci_low"), record.get(f"{name}_ci_high")
            )
            values.setdefault(column, {})[key] = record[name]
    columns = [(c, title) for c in corpora for _n, title in measures]
    table = pd.DataFrame({c: [cells.get(c, {}).get(k, "–") for k in index_rows] for c in columns})
    raw = pd.DataFrame({c: [values.get(c, {}).get(k) for k in index_rows] for c in columns})
    index = pd.MultiIndex.from_arrays(
        [
            metric_labels(report, [m for m, _p in index_rows]),
            ["sigmoid(score)" if p == "sigmoid" else "calibrated (cross-fitted)" for _m, p in index_rows],
        ],
        names=["Metric", "Probability"],
    )
    table.index = raw.index = index
    table.columns = raw.columns = pd.MultiIndex.from_tuples([(str(c), t) for c, t in columns])
    bold = pd.DataFrame(False, index=index, columns=table.columns)
    for column in table.columns:
        numbers = pd.to_numeric(raw[column], errors="coerce")
        bold[column] = best_in_row(numbers, "higher" if column[1] == "PR AUC" else "lower")
    caption = (
        "Each metric's probability of paraphrase against the labels: a log-odds metric (ParaPLUIE: log p(yes) − "
        "log p(no)) read as it stands, sigmoid(score), the test of its interpretability; every metric also "
        "calibrated, by Platt scaling cross-fitted over 5 folds (each pair's probability from a fit on the other "
        "folds): a distance or an overlap score is no probability until calibrated. Brier score (Brier 1950), expected "
        "calibration error over 10 equal-width bins (Naeini et al. 2015; Guo et al. 2017), precision–recall AUC "
        "(average precision), 95% bootstrap intervals (Brier's normal above 20,000 labelled pairs). Lower Brier "
        f"and ECE are better. Bold: the best of each column. {PRECISION}"
    )
    return Shown(table, bold, caption)


def judge_competence_layout(report, frame):
    result = as_is(report, frame.dropna(axis=1, how="all"))  # the other model's columns are empty
    caption = (
        "Each judge's competence as the crowd-aware label sources estimate it: agreement with the majority of "
        "the other judges (the reliability table's), Dawid & Skene's (1979) per-judge sensitivity, specificity "
        "and accuracy (its confusion matrix weighed by the class priors), and MACE's (Hovy et al. 2013) "
        f"competence, 1 − P(spamming); crowd-kit's models fitted on every vote. {PRECISION}"
    )
    return Shown(result.table, caption=caption)

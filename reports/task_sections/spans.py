"""The report of `spans` and `similarity+spans` campaigns: their taggings read from the database, analysed by
`reports.analysis.spans` (`SPANS_REPORT`, `SIMILARITY_SPANS_REPORT`).

Tables (each also a CSV of `report --out`): `span_agreement` (ParaTag's word-level kappa,
span F1 and word accuracy, over all judges then per judge; with 3+ judges the pooled kappa too),
`span_agreement_pairs` (every two judges), `span_agreement_test2` (section 4.2's filter: counts and
the agreement left), `span_degree` (per pair: the majority tagging's share of words), its
distribution by corpus and by system (the campaign's system setting, as every report table), and
`span_correlation` (the degree against every metric and the 5-way answers).
"""

import pandas as pd

from annotation.tagging import SIDES, tags_of
from campaigns.models import Pair
from reports.analysis import spans
from reports.analysis.present import Table
from reports.cache import data_inputs, report_store
from reports.detector_tables import detector_cards, detector_vs_judges
from reports.frames import counted_judgments, load_frames, pair_table

from .base import ESTIMATES, SYSTEM_TABLES, SYSTEMS, Section, TaskSection
from .similarity import AFTER_SYSTEMS, BEFORE_SYSTEMS

REFERENCE_JUDGE = "reference"
NO_SYSTEM = "(no system)"
# The span tagging's tables, each declared once; the by-system one is shown in the Systems section.
SPAN_TABLES = (
    Table(
        "span_agreement",
        "Span agreement (ParaTag): word-level kappa, span F1, word accuracy, overall and per judge",
        section="spans",
    ),
    Table(
        "span_agreement_pairs",
        "Span agreement between every two judges",
        section="spans",
    ),
    Table(
        "span_agreement_test2",
        "Span agreement after ParaTag's Test2 filter (pairs with a span F1 below 0.4 dropped)",
        section="spans",
    ),
    Table(
        "span_degree_by_corpus",
        "Degree of paraphrase (share of tagged words) by corpus; pairs within θ = 0.05",
        section="spans",
    ),
    Table(
        "span_degree_by_system",
        "Degree of paraphrase (share of tagged words) by system; pairs within θ = 0.05",
        section="systems",
    ),
    Table(
        "span_correlation",
        "Degree of paraphrase against the metrics, and against the 5-way answers where judges gave them "
        "(Spearman, Kendall)",
        section="spans",
    ),
    Table(
        "span_degree",
        "Degree of paraphrase per pair",
        section="spans",
    ),
    Table(
        "detector_vs_judges",
        "ParaTag detector (the ParaTag metric) against each judge and the majority: word accuracy, span F1, kappa",
        section="spans",
    ),
    Table(
        "span_detectors",
        "ParaTag detectors trained on this campaign: held-out test figures (Table 3) beside the "
        "diff baseline and the judges",
        section="spans",
    ),
)

SPAN_TABLE_NAMES = tuple(table.name for table in SPAN_TABLES)


def span_taggings(campaigns, pair_id_of_pk) -> pd.DataFrame:
    """Counted taggings (`pair_id`, `judge`, 0/1 `<side>_tags`); pre-tagged pairs no judge tagged add theirs."""
    judgments = counted_judgments(campaigns, values=True)
    stored = Pair.objects.filter(pk__in=list(pair_id_of_pk.index)).values_list("pk", "tokens", "gold_tags")
    pairs = {pk: (tokens, gold) for pk, tokens, gold in stored}
    rows = []
    for pair_pk, judge, values in judgments[["pair_pk", "judge", "values"]].itertuples(index=False):
        if isinstance(values, dict) and set(SIDES) <= set(values):
            tokens = pairs[pair_pk][0]
            tags = {f"{side}_tags": tags_of(values[side], len(tokens[side])) for side in SIDES}
            rows.append({"pair_id": pair_id_of_pk[pair_pk], "judge": judge, **tags})
    tagged = {row["pair_id"] for row in rows}
    for pair_pk, (_tokens, gold) in pairs.items():
        if gold and pair_id_of_pk[pair_pk] not in tagged:
            rows.append({"pair_id": pair_id_of_pk[pair_pk], "judge": REFERENCE_JUDGE, **_gold_columns(gold)})
    return pd.DataFrame(rows, columns=["pair_id", "judge", "source_tags", "hypothesis_tags"])


def _gold_columns(gold):
    return {f"{side}_tags": list(gold[side]) for side in SIDES}


def span_tables(campaigns, *, min_f1=spans.TEST2_MIN_F1, theta=spans.THETA) -> dict[str, pd.DataFrame]:
    """The span report's tables, by name (see the module docstring); `min_f1`: Test2's threshold, `theta`: the
    degree-of-paraphrase subset's bound (ParaTag's values by default).

    Computed once per state of the campaigns' data (their data versions: pairs, judgments, scores), as the
    report is: the page and each table download read them. The detectors' cards are read every time, from
    their files, which no data version covers (a detector trained since shows at once).
    """
    campaigns = list(campaigns)
    store = report_store()
    key = store.key("spans", data_inputs(campaigns), min_f1, theta)
    tables = store.get_or_set(key, lambda: _tables_from_the_data(campaigns, min_f1, theta))
    return {**tables, "span_detectors": detector_cards(campaigns)}


def _tables_from_the_data(campaigns, min_f1, theta):
    frames = load_frames(campaigns)
    pairs = frames.pairs
    pair_id_of_pk = pd.Series(pairs["pair_id"].to_numpy(), index=pair_table(campaigns)["pk"].to_numpy())
    taggings = span_taggings(campaigns, pair_id_of_pk)
    ordinals = frames.judgments["rating"]  # the type's rating (similarity+spans: the 5-way answer's ordinal)
    if ordinals.notna().any():
        mean = pd.DataFrame({"pair_id": frames.judgments["pair_id"], "o": ordinals}).groupby("pair_id")["o"].mean()
        pairs = pairs.assign(mean_ordinal=pairs["pair_id"].map(mean))
    # The system of each pair after the campaign's System keys (reports.frames.pair_table), "–" without one.
    pairs = pairs.assign(system=pairs["system"].fillna("").replace("", NO_SYSTEM))
    return {
        **spans.span_analysis(taggings, pairs, frames.directions, min_f1=min_f1, theta=theta),
        "detector_vs_judges": detector_vs_judges(campaigns, taggings, pair_id_of_pk),
    }


def _no_taggings(report):
    if all(report.tables.get(name) is None or report.tables[name].empty for name in SPAN_TABLE_NAMES):
        return "No taggings yet: span agreement appears once judges have tagged pairs (or pairs come pre-tagged)."
    return None


# The by-system table is shown in the Systems section.
SPANS_SECTION = Section(
    "spans",
    "Span tagging and degree of paraphrase",
    tuple(table.name for table in SPAN_TABLES if table.section == "spans"),
    _no_taggings,
)
SPANS_REPORT = TaskSection(
    sections=(SPANS_SECTION, SYSTEMS.with_tables("span_degree_by_system", "systems"), ESTIMATES),
    declared=SPAN_TABLES,
    tables=span_tables,
)
# The 5-way analysis, the span section before the Systems, which shows both measures.
SIMILARITY_SPANS_REPORT = TaskSection(
    sections=(
        *BEFORE_SYSTEMS,
        SPANS_SECTION,
        SYSTEMS.with_tables(*SYSTEM_TABLES, "span_degree_by_system"),
        ESTIMATES,
        *AFTER_SYSTEMS,
    ),
    declared=SPAN_TABLES,
    tables=span_tables,
)

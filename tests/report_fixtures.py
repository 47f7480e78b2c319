"""Report fixtures of each task type: four systems paraphrase six sources in two corpora, every metric scored.

Shared by the presentation tests (page, LaTeX and one-file HTML cell by cell), the pdflatex
width check and the Chromium tests, which also write the screenshots of docs/img/.
"""

from annotation import assignment as assign
from annotation.tasktypes.criteria.scale import CRITERIA
from campaigns.importers import import_pairs
from campaigns.models import Campaign, Score
from campaigns.task_types import get_task_type
from metrics.registry import METRICS, natural_threshold_of
from tests.factories import judge_by_gold, make_judge, without_controls

SYSTEMS = ["Copy", "Rephrase", "Shuffle", "Summary"]
SOURCES = [
    ("Alpha", "The committee approved the new budget on Monday."),
    ("Alpha", "Heavy rain closed the mountain road for two days."),
    ("Alpha", "She finished the report before the deadline."),
    ("Beta", "The museum opens its new wing next spring."),
    ("Beta", "Two students won the regional chess contest."),
    ("Beta", "The bakery on the corner sells fresh bread daily."),
]
# Gold labels rank the systems Copy > Rephrase > Shuffle > Summary, not perfectly.
GOLD = {
    "Copy": [1, 1, 1, 1, 1, 0],
    "Rephrase": [1, 1, 0, 1, 1, 0],
    "Shuffle": [1, 0, 0, 1, 0, 0],
    "Summary": [0, 0, 1, 0, 0, 0],
}


def _hypothesis(system, index, source):
    words = source.rstrip(".").split()
    if system == "Copy":
        return source
    if system == "Rephrase":
        return " ".join(["Indeed,", words[0].lower(), *words[1:]]) + "."
    if system == "Shuffle":
        return " ".join(words[index % 3 :] + words[: index % 3]) + "."
    return " ".join(words[: 3 + index % 2]) + "."


def _pairs_csv():
    lines = ["id,corpus,source,hypothesis,label,system"]
    for system, labels in GOLD.items():
        for index, ((corpus, source), gold) in enumerate(zip(SOURCES, labels, strict=True)):
            hypothesis = _hypothesis(system, index, source)
            lines.append(f'{system[:2].lower()}{index},{corpus},"{source}","{hypothesis}",{gold},{system}')
    return "\n".join(lines).encode()


def _score(metric, position, gold):
    """A deterministic score that separates the labels imperfectly, in each metric's direction and range."""
    spread = ((position * 7 + len(metric) * 3) % 11) / 11
    closeness = 0.4 * gold + 0.6 * spread
    if METRICS[metric].direction == "lower":
        return round(20 * (1 - closeness), 3)
    if (threshold := natural_threshold_of(metric)) is not None:  # a log-odds around its threshold (ParaPLUIE's 0)
        return round(threshold + 6 * closeness - 3, 3)
    if metric in ("llm_vote", "llm_checked"):
        return float(closeness > 0.5)
    return round(closeness, 3)


def report_campaign(researcher, task_type="similarity", slug=None):
    """A campaign of `task_type` with 24 pairs of four systems, every registered metric, and its judges' answers."""
    slug = slug or f"report-{task_type.replace('+', '-')}"
    campaign = Campaign.objects.create(
        slug=slug, name=f"Report of {get_task_type(task_type).title}", task_type=task_type, created_by=researcher
    )
    without_controls(campaign)
    import_pairs(campaign, _pairs_csv(), filename="pairs.csv")
    pairs = list(campaign.real_pairs.order_by("pk"))
    for position, pair in enumerate(pairs):
        for metric in METRICS:
            value = _score(metric, position, pair.gold_label or 0)
            Score.objects.create(pair=pair, metric=metric, signature=f"metric:{metric}|version:1", value=value)
    GOLD_FOLLOWING_ANSWERS.get(task_type, _answer_examples)(campaign, pairs)
    return campaign


def _answer_examples(campaign, pairs):
    """Two judges answer every pair with the task type's example answer, as its page would post it: for a type
    that declares a vote (`TaskType.vote`), one voting as the pair's gold label says, so its report has labels."""
    task_type = get_task_type(campaign.task_type)
    answers = {}
    for gold in (None, 0, 1):
        form = task_type.answer_form({"assignment": "1", **task_type.example_answer(gold)})
        assert form.is_valid(), form.errors
        answers[gold] = task_type.answer(form.cleaned_data)
    for level in ("good", "native"):
        judge = make_judge(campaign, level=level)
        for position, pair in enumerate(pairs, start=1):
            assignment = judge.assignments.create(pair=pair, position=position, top="source")
            assign.record_judgment(assignment, answers[pair.gold_label if task_type.vote else None])


def _rate(campaign, pairs):
    """Two judges rate every pair on PEM's criteria, higher for gold paraphrases, one judge a point harsher."""
    for harshness in (0, 1):
        judge = make_judge(campaign)
        for position, pair in enumerate(pairs, start=1):
            base = 2 + 2 * (pair.gold_label or 0) + position % 2
            ratings = {name: max(1, min(5, base - harshness + i % 2)) for i, name in enumerate(CRITERIA)}
            assignment = judge.assignments.create(pair=pair, position=position, top="source")
            assign.record_judgment(assignment, ratings)


def _tag(campaign, pairs, *, with_answer=False):
    """Two judges tag words that changed: more of them on pairs that are not paraphrases.

    `with_answer` (similarity+spans): each also answers the 5-way question as the gold label says.
    """
    for offset in (0, 1):
        judge = make_judge(campaign, level=("good", "native")[offset])
        for position, pair in enumerate(pairs, start=1):
            n_source, n_hypothesis = len(pair.words("source")), len(pair.words("hypothesis"))
            width = 1 if pair.gold_label else 3
            source = [i for i in range(offset, min(n_source, offset + width))]
            hypothesis = [i for i in range(min(n_hypothesis, width + offset))] if position % 3 else []
            assignment = judge.assignments.create(pair=pair, position=position, top="source")
            tagging = {"source": source, "hypothesis": hypothesis}
            if with_answer:
                answer = "same_meaning" if pair.gold_label else "very_different"
                assign.record_judgment(assignment, {"answer": answer, **tagging})
            else:
                assign.record_judgment(assignment, tagging)


# Answers that follow the gold labels, for the types whose reports measure agreement with them; every
# other registered type is answered with its example answer (`_answer_examples`), so its report is tested too.
GOLD_FOLLOWING_ANSWERS = {
    "similarity": judge_by_gold,
    "criteria": _rate,
    "spans": _tag,
    "similarity+spans": lambda campaign, pairs: _tag(campaign, pairs, with_answer=True),
}

"""Span tagging (ParaTag, sections 3 and 4.2): judges tag, in each sentence, the words with no counterpart.

`spans` asks only for the tagging; `similarity+spans` asks for the 5-way answer first, then
the tagging, on the same screen. A tagging is stored in `Judgment.values` as the tagged
word indexes per side over the pair's stored tokens (`annotation.tagging`), beside the
5-way answer (`values["answer"]`) for `similarity+spans`; an empty
tagging is stored only when the judge says so ("Nothing to tag", or a confirmed empty
submission). Training pairs carry reference taggings that the judge sees after answering.
"""

import pandas as pd
from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.diff import word_diff
from annotation.tagging import SIDES, majority_word_tags, out_of_range, tags_of
from annotation.training import explanation_of
from campaigns.models import Pair, tokens_of

from ..base import AnswerForm, TaskType, ascii_whole_number
from ..similarity.tasktype import Similarity, SimilarityAnswerForm, answer_feedback_row

# No sentence Parasol shows has this many words; more indexes are an attack, not an answer.
MAX_TAGGED_WORDS = 1000


class WordIndexesField(forms.Field):
    """Tagged word indexes, one form value each (checkboxes, or the hidden inputs judge.js keeps)."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value):
        if not value:
            return []
        try:
            indexes = sorted({ascii_whole_number(item) for item in value})
        except (TypeError, ValueError):
            raise forms.ValidationError(_("Word indexes must be whole numbers.")) from None
        if len(indexes) > MAX_TAGGED_WORDS:
            raise forms.ValidationError(_("Too many tagged words."))
        return indexes


class SpansAnswerForm(AnswerForm):
    source_tags = WordIndexesField(required=False)
    hypothesis_tags = WordIndexesField(required=False)
    nothing = forms.BooleanField(required=False)  # "Nothing to tag": an explicit empty tagging
    empty_confirmed = forms.BooleanField(required=False)  # judge.js: the judge confirmed an empty submit

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("nothing"):
            cleaned["source_tags"], cleaned["hypothesis_tags"] = [], []
        elif not (cleaned.get("source_tags") or cleaned.get("hypothesis_tags") or cleaned.get("empty_confirmed")):
            raise forms.ValidationError(_("Nothing is tagged."))
        return cleaned


class SimilaritySpansAnswerForm(SpansAnswerForm, SimilarityAnswerForm):
    pass


class Spans(TaskType):
    name = "spans"
    title = _("Span tagging (ParaTag)")
    judge_template = "annotation/tasktypes/_spans.html"
    guidelines_template = "annotation/tasktypes/_spans_guidelines.html"
    introduction = _(
        "Thank you for helping! You will read pairs of English sentences and tag, in each, the words that have "
        "no counterpart in the other sentence."
    )
    # Several clicks per pair: a guess (no stored answers measured it yet), replaced by the
    # measured median once answers are stored.
    default_answer_seconds = 25
    # The words are the answer controls: the pair is not shown a second time above them.
    shows_pair = False
    # Control items expect a 5-way answer; a tagging alone cannot pass or fail them: no controls.
    control_kinds = ()
    # The campaign page offers the taggings export and the span detector.
    tags_words = True
    report_section = "reports.task_sections.spans.SPANS_REPORT"
    answer_form = SpansAnswerForm
    invalid_answer_message = _(
        "Tag the words that have no counterpart in the other sentence, or choose “Nothing to tag”."
    )
    pair_columns = [
        "n_taggings",
        "source_tagged_words",
        "hypothesis_tagged_words",
        "source_tagged_share",
        "hypothesis_tagged_share",
        "tagged_share",
    ]

    def judge_context(self, assignment):
        pair = assignment.pair
        bottom = "hypothesis" if assignment.top == "source" else "source"
        changed = _changed_words(pair, self.highlights(assignment.judge.campaign))
        rows = [
            {"side": side, "field": f"{side}_tags", "words": _words(pair, side, changed[side])}
            for side in (assignment.top, bottom)
        ]
        return {"span_rows": rows}

    def highlights(self, campaign):
        # Off unless the campaign turns it on: the highlight would suggest the tagging.
        return campaign.span_highlight

    def answer(self, cleaned_data):
        return {side: cleaned_data[f"{side}_tags"] for side in SIDES}

    def example_answer(self, paraphrase=None):
        # "Nothing to tag" (a submit button): valid on any pair; similarity+spans' 5-way answer comes first.
        return super().example_answer(paraphrase) | {"nothing": "1"}

    def answer_problem(self, answer, assignment):
        pair = assignment.pair
        return out_of_range(self._tagging(answer), {side: len(pair.words(side)) for side in SIDES})

    def _tagging(self, answer):
        return {side: answer[side] for side in SIDES}

    def protocol(self):
        return [
            ("Tagging", "in each sentence, the words with no counterpart in the other"),
            ("Pair result", "the majority tagging: a word is tagged when more than half of the taggings tag it"),
        ]

    def dashboard(self, judgments):
        """Taggings received, the share of words tagged over all of them, and how many tagged nothing."""
        taggings = list(judgments.values_list("values", "pair__tokens"))
        tagged = words = empty = 0
        for tagging, tokens in taggings:
            marked = sum(len(tagging.get(side, [])) for side in SIDES)
            tagged, words = tagged + marked, words + sum(len((tokens or {}).get(side, [])) for side in SIDES)
            empty += marked == 0
        share = f"{100 * tagged / words:.0f} %" if words else "–"
        rows = [(_("Taggings"), len(taggings)), (_("Words tagged"), share), (_("Taggings with nothing tagged"), empty)]
        return [{"title": _("Span tagging"), "rows": rows}]

    def feedback(self, judgment):
        """After a training answer: the judge's tagging beside the reference, word by word, and the pair's why."""
        explanation = explanation_of(judgment.pair)
        sides = _tagging_feedback(judgment, self.highlights(judgment.judge.campaign))
        if not sides and not explanation:
            return None
        return {"feedback_sides": sides, "explanation": explanation}

    def aggregate(self, judgments, pair_pks):
        """Per pair: taggings counted, the majority tagging's words and its share of each sentence and of both."""
        pairs = Pair.objects.filter(pk__in=list(pair_pks)).values_list("pk", "tokens", "source", "hypothesis")
        # An older pair without stored tokens gets them as `Pair.words` would (a tagging indexes them).
        tokens = {pk: stored or tokens_of(source, hypothesis) for pk, stored, source, hypothesis in pairs}
        by_pair = judgments.groupby("pair_pk")["values"].apply(list).to_dict() if len(judgments) else {}
        rows = [_pair_result(tokens.get(pair_pk) or {}, by_pair.get(pair_pk, [])) for pair_pk in pair_pks]
        # Spans' own columns, not `self.pair_columns`: SimilaritySpans adds the similarity ones beside these.
        return pd.DataFrame(rows, index=pd.Index(pair_pks), columns=Spans.pair_columns)


class SimilaritySpans(Spans):
    """The 5-way answer, then the tagging, on one screen; both stored on the same judgment."""

    name = "similarity+spans"
    title = _("Similarity (5-way) and span tagging")
    introduction = _(
        "Thank you for helping! You will read pairs of English sentences, tell us how close their meanings are "
        "(one of five answers), then tag, in each, the words that have no counterpart in the other sentence."
    )
    # The 5-way answer and the tagging: a guess (no stored answers measured it yet), replaced
    # by the measured median once answers are stored.
    default_answer_seconds = 35
    # The 5-way answer passes or fails both kinds of control, as in `similarity`.
    control_kinds = Similarity.control_kinds
    # The 5-way answer is the human label, as in `similarity`.
    vote = Similarity.vote
    report_section = "reports.task_sections.spans.SIMILARITY_SPANS_REPORT"
    judge_template = "annotation/tasktypes/_similarity_spans.html"
    answer_form = SimilaritySpansAnswerForm
    invalid_answer_message = _(
        "First choose how close the meanings are (one of the five answers), then tag the words or choose "
        "“Nothing to tag”."
    )
    pair_columns = [*Similarity.pair_columns, *Spans.pair_columns]
    # The guidelines say the pair has two parts, then explain the tagging.
    guidelines_template = "annotation/tasktypes/_similarity_spans_guidelines.html"

    def judge_context(self, assignment):
        return Similarity().judge_context(assignment) | super().judge_context(assignment)

    def answer(self, cleaned_data):
        return Similarity().answer(cleaned_data) | super().answer(cleaned_data)

    def feedback(self, judgment):
        """The expected 5-way answer beside the judge's, then the tagging beside the reference, and the why."""
        row = answer_feedback_row(judgment)
        context = super().feedback(judgment) or {"explanation": ""}
        if row is None and "feedback_sides" not in context:
            return None
        return {"feedback_rows": [row] if row else []} | context

    parse_expected = Similarity.parse_expected

    def dashboard(self, judgments):
        return Similarity().dashboard(judgments) + super().dashboard(judgments)

    def protocol(self):
        return Similarity().protocol() + super().protocol()

    def aggregate(self, judgments, pair_pks):
        similarity = Similarity().aggregate(judgments, pair_pks)
        return pd.concat([similarity, super().aggregate(judgments, pair_pks)], axis=1)[self.pair_columns]


def _tagging_feedback(judgment, highlight):
    """Per side in the order shown, each word: its text, tagged by the judge, in the reference, highlighted.

    Empty when the pair has no reference tagging.
    """
    pair = judgment.pair
    if not pair.gold_tags:
        return []
    changed = _changed_words(pair, highlight)
    top = judgment.assignment.top
    sides = []
    for side in (top, "hypothesis" if top == "source" else "source"):
        words = pair.words(side)
        mine = tags_of(judgment.values.get(side, []), len(words))
        rows = zip(words, mine, pair.gold_tags[side], strict=True)
        sides.append(
            {
                "side": side,
                "words": [
                    {"text": word, "mine": tagged, "reference": reference, "changed": i in changed[side]}
                    for i, (word, tagged, reference) in enumerate(rows)
                ],
            }
        )
    return sides


def _words(pair, side, changed):
    return [{"index": i, "text": word, "changed": i in changed} for i, word in enumerate(pair.words(side))]


def _changed_words(pair, highlight):
    """Per side, the indexes of the words the yellow highlight marks (none unless the campaign turns it on)."""
    if not highlight:
        return {side: set() for side in SIDES}
    segments = dict(zip(SIDES, word_diff(pair.source, pair.hypothesis), strict=True))
    return {side: _indexes_in_changed_segments(pair.words(side), segments[side]) for side in SIDES}


def _indexes_in_changed_segments(words, segments):
    """The words that start inside a changed segment (the segments cover the sentence, the words follow in order).

    A punctuation mark alone is never highlighted, as in `annotation.diff` ("bus." is one changed segment; "." is not).
    """
    text = "".join(segment.text for segment in segments)
    changed_at = [segment.changed for segment in segments for _ in segment.text]
    changed, cursor = set(), 0
    for index, word in enumerate(words):
        start = text.find(word, cursor)
        if start >= 0:
            cursor = start + len(word)
            if changed_at[start] and any(character.isalnum() for character in word):
                changed.add(index)
    return changed


def _pair_result(tokens, taggings):
    """One pair's aggregate: the per-word majority over its taggings, as words and shares."""
    result = {"n_taggings": len(taggings)}
    if not taggings:
        # An untagged pair has no majority tagging: its cells stay empty (not "no word tagged").
        return result | {column: None for column in Spans.pair_columns[1:]}
    tagged_total = words_total = 0
    for side in SIDES:
        words = tokens.get(side, [])
        majority = majority_word_tags([tags_of(tagging.get(side, []), len(words)) for tagging in taggings])
        tagged = [word for word, tag in zip(words, majority, strict=True) if tag]
        result[f"{side}_tagged_words"] = " ".join(tagged)
        result[f"{side}_tagged_share"] = len(tagged) / len(words) if words else None
        tagged_total, words_total = tagged_total + len(tagged), words_total + len(words)
    result["tagged_share"] = tagged_total / words_total if words_total else None
    return result

"""Span tagging (ParaTag, sections 2–3): judges tag, in each sentence, the words with no counterpart.

`spans` asks only for the tagging; `similarity+spans` asks for the 5-way answer first, then
the tagging, on the same screen. A tagging is stored in `Judgment.values` as the tagged
word indexes per side over the pair's stored tokens (`annotation.tagging`); an empty
tagging is stored only when the judge says so ("Nothing to tag", or a confirmed empty
submission). Training pairs carry reference taggings that the judge sees after answering.
"""

import pandas as pd
from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.diff import word_diff
from annotation.tagging import SIDES, majority_word_tags, out_of_range, tags_of
from campaigns.models import Pair

from .base import AnswerForm, ReportSection, TaskType, ascii_whole_number
from .similarity import Similarity, SimilarityAnswerForm

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
    # The words are the answer controls: the pair is not shown a second time above them.
    shows_pair = False
    # Control items expect a 5-way answer; a tagging alone cannot pass or fail them.
    uses_controls = False
    answer_form = SpansAnswerForm
    invalid_answer_message = _(
        "Tag the words that have no counterpart in the other sentence, or choose “Nothing to tag”."
    )
    stored_fields = ("values",)
    pair_columns = [
        "n_taggings",
        "source_tagged_words",
        "hypothesis_tagged_words",
        "source_tagged_share",
        "hypothesis_tagged_share",
        "tagged_share",
    ]
    report_section = ReportSection(
        name="spans",
        title=_("Span tagging: agreement and degree of paraphrase"),
        template="annotation/tasktypes/_spans_report.html",
    )

    def judge_context(self, assignment):
        pair = assignment.pair
        bottom = "hypothesis" if assignment.top == "source" else "source"
        changed = _changed_words(pair, assignment.judge.campaign.span_highlight)
        rows = [
            {"side": side, "field": f"{side}_tags", "words": _words(pair, side, changed[side])}
            for side in (assignment.top, bottom)
        ]
        return {"span_rows": rows}

    def answer(self, cleaned_data):
        return {side: cleaned_data[f"{side}_tags"] for side in SIDES}

    def answer_problem(self, answer, assignment):
        pair = assignment.pair
        return out_of_range(self._tagging(answer), {side: len(pair.words(side)) for side in SIDES})

    def judgment_fields(self, answer):
        return {"values": self._tagging(answer)}

    def _tagging(self, answer):
        return answer

    def feedback(self, judgment):
        """After a training answer: the judge's tagging beside the reference, word by word."""
        pair = judgment.pair
        if not pair.gold_tags:
            return None
        sides = []
        for side in SIDES:
            words = pair.words(side)
            mine = tags_of(judgment.values.get(side, []), len(words))
            sides.append({"side": side, "words": list(zip(words, mine, pair.gold_tags[side], strict=True))})
        return {"feedback_sides": sides}

    def aggregate(self, judgments, pair_ids):
        """Per pair: taggings counted, the majority tagging's words and its share of each sentence and of both."""
        tokens = dict(Pair.objects.filter(pk__in=list(pair_ids)).values_list("pk", "tokens"))
        by_pair = judgments.groupby("pair_id")["values"].apply(list).to_dict() if len(judgments) else {}
        rows = [_pair_result(tokens.get(pair_id) or {}, by_pair.get(pair_id, [])) for pair_id in pair_ids]
        return pd.DataFrame(rows, index=pd.Index(pair_ids), columns=self.pair_columns)


class SimilaritySpans(Spans):
    """The 5-way answer, then the tagging, on one screen; both stored on the same judgment."""

    name = "similarity+spans"
    title = _("Similarity (5-way) and span tagging")
    uses_controls = True
    judge_template = "annotation/tasktypes/_similarity_spans.html"
    answer_form = SimilaritySpansAnswerForm
    invalid_answer_message = _("Choose one of the five answers, then tag the words or choose “Nothing to tag”.")
    stored_fields = ("label", "values")
    pair_columns = [*Similarity.pair_columns, *Spans.pair_columns]
    report_section = ReportSection(
        name="similarity+spans",
        title=_("Metrics against the judges' labels, and span tagging"),
        template="annotation/tasktypes/_spans_report.html",
    )

    def judge_context(self, assignment):
        return Similarity().judge_context(assignment) | super().judge_context(assignment)

    def answer(self, cleaned_data):
        return {"label": cleaned_data["label"], "tagging": super().answer(cleaned_data)}

    def _tagging(self, answer):
        return answer["tagging"]

    def judgment_fields(self, answer):
        return {"label": answer["label"], **super().judgment_fields(answer)}

    def aggregate(self, judgments, pair_ids):
        similarity = Similarity().aggregate(judgments, pair_ids)
        return pd.concat([similarity, super().aggregate(judgments, pair_ids)], axis=1)[self.pair_columns]


def _words(pair, side, changed):
    return [{"index": i, "text": word, "changed": i in changed} for i, word in enumerate(pair.words(side))]


def _changed_words(pair, highlight):
    """Per side, the indexes of the words the yellow highlight marks (none unless the campaign turns it on)."""
    if not highlight:
        return {side: set() for side in SIDES}
    segments = dict(zip(SIDES, word_diff(pair.source, pair.hypothesis), strict=True))
    return {side: _indexes_in_changed_segments(pair.words(side), segments[side]) for side in SIDES}


def _indexes_in_changed_segments(words, segments):
    """The words that start inside a changed segment (the segments cover the sentence, the words follow in order)."""
    text = "".join(segment.text for segment in segments)
    changed_at = [segment.changed for segment in segments for _ in segment.text]
    changed, cursor = set(), 0
    for index, word in enumerate(words):
        start = text.find(word, cursor)
        if start >= 0:
            cursor = start + len(word)
            if changed_at[start]:
                changed.add(index)
    return changed


def _pair_result(tokens, taggings):
    """One pair's aggregate: the per-word majority over its taggings, as words and shares."""
    result = {"n_taggings": len(taggings)}
    tagged_total = words_total = 0
    for side in SIDES:
        words = tokens.get(side, [])
        majority = majority_word_tags([tags_of(tagging.get(side, []), len(words)) for tagging in taggings])
        tagged = [word for word, tag in zip(words, majority, strict=True) if tag]
        result[f"{side}_tagged_words"] = " ".join(tagged) if taggings else None
        result[f"{side}_tagged_share"] = len(tagged) / len(words) if taggings and words else None
        tagged_total, words_total = tagged_total + len(tagged), words_total + len(words)
    result["tagged_share"] = tagged_total / words_total if taggings and words_total else None
    return result

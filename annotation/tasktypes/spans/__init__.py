"""ParaTag's span tagging task types: `tasktype.Spans` and `tasktype.SimilaritySpans`.

The tagging's facts (sides, 0/1 conversions, the majority rule) are in `annotation.tagging`,
shared with the reports and the span detector. Nothing is imported here.
"""

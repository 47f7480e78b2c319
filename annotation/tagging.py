"""Span taggings' facts, in one place and free of Django (like `annotation.tasktypes.similarity.scale`).

A tagging marks, in each sentence of a pair, the words with no counterpart in the other
sentence (ParaTag, section 4.2). It is stored as the tagged word indexes per side,
{"source": [2, 3], "hypothesis": []}, over the pair's stored tokens; exports and the
analysis read it as 0/1 per word. A word is in a pair's aggregate tagging when more
than half of the pair's judges tagged it.
"""

SIDES = ("source", "hypothesis")


def tags_of(indexes, n_words) -> list[int]:
    """0/1 per word from the tagged word indexes."""
    tagged = set(indexes)
    return [int(i in tagged) for i in range(n_words)]


def indexes_of(tags) -> list[int]:
    """The tagged word indexes from 0/1 per word."""
    return [i for i, tag in enumerate(tags) if int(tag)]


def majority_word_tags(taggings) -> list[int]:
    """Per word, 1 when more than half of the taggings (0/1 lists of one sentence) tag it."""
    taggings = [list(tags) for tags in taggings]
    if not taggings:
        return []
    return [int(sum(column) * 2 > len(taggings)) for column in zip(*taggings, strict=True)]


def out_of_range(indexes_by_side, n_words_by_side):
    """A message naming the first index outside its sentence, or None."""
    for side in SIDES:
        for index in indexes_by_side.get(side, []):
            if not 0 <= index < n_words_by_side[side]:
                return f"word {index} does not exist in the {side} (it has {n_words_by_side[side]} words)"
    return None

"""Words as a reader counts them: span tagging shows, stores and analyses these; lm_fluency divides by them.

A word is a run of letters or digits, with inner apostrophes and hyphens kept (don't,
well-known), or one punctuation mark. Whitespace never becomes a token, so joining the
tokens loses only spacing: taggings stay valid as long as the stored tokens are used.
"""

import re

WORD = re.compile(r"\w+(?:['’-]\w+)*|[^\w\s]", re.UNICODE)


def word_tokens(text: str) -> list[str]:
    """The sentence's words and punctuation marks, in order."""
    return WORD.findall(text)

"""Words as a reader counts them: span tagging shows, stores and analyses these; the ParaTag detector reads them.

Whitespace never becomes a token, so joining the tokens loses only spacing. A tagging is a
list of word indexes, so it is only meaningful with the tokens it was made over: pairs store
their tokens with the version that made them (`Pair.tokens`, `Pair.tokenisation`), and a
new version is added here beside the old ones, never edited in place.

Version 1: a run of letters or digits, with inner apostrophes and hyphens kept (don't,
well-known), or one punctuation mark. Real text broke into many chips: "A$4.56" was five.

Version 2 keeps whole what a reader reads as one thing, after the rules of NLTK's
TweetTokenizer (`nltk.tokenize.casual`: URLs, e-mail addresses, numbers with decimals,
words with inner apostrophes or hyphens, ellipses), extended to the units of news text:
currencies before or after a number (A$4.56, US$10, €5, 5€), percentages (4.4%), thousands
and decimal separators (1,000.50; 3,5), dates and times (2024-03-12, 12/03/2024, 10:30),
numbers with a unit or a hyphenated word (5km, 1.2bn, 20-year-old) and initialisms (U.S.).
A plain compiled regular expression, as NLTK's own tokenizers are: a sentence costs
microseconds, where spaCy would add a heavy dependency and a pipeline to load for the
same rules (`docs/protocols/spans.md` has the measurement).
"""

import re

V1 = re.compile(r"\w+(?:['’-]\w+)*|[^\w\s]", re.UNICODE)

CURRENCY = "$€£¥₹₩₽¢"
V2 = re.compile(
    rf"""
    (?:https?://|www\.)(?:[^\s()<>{{}}\[\]"]|\([^\s()]*\))*   # a URL, balanced brackets kept,
    (?:\([^\s()]*\)|[^\s()<>{{}}\[\]"`!;:'.,?«»“”‘’])           # its closing punctuation left out
  | [\w.+-]+@\w[\w-]*(?:\.\w[\w-]*)+                          # an e-mail address
  | (?<!\w)(?:[A-Z]{{0,3}}[{CURRENCY}])?                      # a currency first: A$, US$, €
    \d+(?:[.,:/-]\d+)*                                         # 4.56, 1,000, 2024-03-12, 10:30
    (?:[%‰{CURRENCY}]|[^\W\d_]+)?                              # 4.4%, 5€, 5km, 1990s
    (?:['’-]\w+)*                                              # 20-year-old
  | (?<!\w)(?:[A-Z]\.){{2,}}                                   # U.S., U.K.
  | \w+(?:['’-]\w+)*                                           # a word, don't, well-known
  | \.\.\.                                                     # an ellipsis
  | [^\w\s]                                                    # one punctuation mark
    """,
    re.UNICODE | re.VERBOSE,
)

TOKENISERS = {1: V1, 2: V2}
# The version new pairs are tokenised with (`Pair.build`), and the ParaTag detector reads.
TOKENISATION = 2


def word_tokens(text: str, version: int = TOKENISATION) -> list[str]:
    """The sentence's words and punctuation marks, in order, by tokenisation ``version``."""
    return TOKENISERS[version].findall(text)

"""ParaTag's filters for generated pairs (section 4.1): keep pairs that are neither copies nor unrelated.

ParaTag kept GPT-3 pairs whose intra-pair BLEU lay strictly between 5 and 20, whose
sentences both had at least 10 characters, and whose longer sentence had fewer than 2.5
times the words of the shorter (`paratag_reason` applies all three; words are split on
whitespace, characters counted after stripping, as the paper does not say more).
The paper does not name its BLEU implementation; here it is
sacrebleu's sentence BLEU (0–100, default 13a tokeniser and exponential smoothing) with the
source as the reference. Each check returns a reason for rejection, or None to keep the pair.
"""

import math

from sacrebleu.metrics import BLEU

_bleu = BLEU(effective_order=True)

PARATAG_BLEU_RANGE = (5.0, 20.0)
MIN_CHARACTERS = 10
MAX_LENGTH_RATIO = 2.5


def pair_bleu(source: str, hypothesis: str) -> float:
    """sacrebleu's sentence BLEU of the hypothesis against the source, 0–100."""
    return _bleu.sentence_score(hypothesis, [source]).score


def bleu_range_problem(low, high) -> str | None:
    """What is wrong with a BLEU range given by a user, or None: each given end a finite number
    from 0 to 100 (NaN and infinities compare false with everything, so they would filter nothing
    or everything), and low < high (the low < high wording is what the forms and commands print).
    """
    for name, value in (("lower", low), ("upper", high)):
        if value is not None and not (math.isfinite(value) and 0 <= value <= 100):
            return f"the {name} end of the BLEU range must be a number from 0 to 100, not {value}"
    if low is not None and high is not None and low >= high:
        return f"the BLEU range needs low < high, got {low:g} and {high:g}"
    return None


def bleu_range_reason(source, hypothesis, low, high):
    """Why the pair falls outside the open BLEU interval (low, high), or None."""
    if low > high:
        raise ValueError(f"BLEU range must be low <= high, got {low} > {high}")
    score = pair_bleu(source, hypothesis)
    if score <= low:
        return f"BLEU {score:.1f} is not above {low:g} (the sentences share too little wording)"
    if score >= high:
        return f"BLEU {score:.1f} is not below {high:g} (the hypothesis copies too much of the source)"
    return None


def length_reason(source, hypothesis):
    """ParaTag's length checks: both sentences long enough, neither more than 2.5 times the other in words."""
    if min(len(source.strip()), len(hypothesis.strip())) < MIN_CHARACTERS:
        return f"a sentence has fewer than {MIN_CHARACTERS} characters"
    shorter, longer = sorted((len(source.split()), len(hypothesis.split())))
    if longer >= MAX_LENGTH_RATIO * shorter:
        return f"one sentence has {MAX_LENGTH_RATIO:g} times the words of the other or more"
    return None


def paratag_reason(source, hypothesis, low, high):
    """Section 4.1's filters together, as import and generation apply them: the BLEU range, then the lengths."""
    return bleu_range_reason(source, hypothesis, low, high) or length_reason(source, hypothesis)

"""Agreement between two taggings of the same sentences (ParaTag, sections 4.2 and 6.2, Table 3).

One place for the word-level figures that the span report gives for two judges and the
detector's evaluation gives for a detector against the judges: word accuracy on the 0/1
tags, Cohen's kappa over the concatenated tags (scikit-learn), and span F1 with seqeval
(exact span match, BIO labels, the first tagging as reference).
"""

import numpy as np

SPAN = "GAP"  # seqeval's entity name for a run of tagged words


def _span_f1():
    """seqeval's span F1, imported on first use (with scikit-learn and scipy.stats: a second a report may not need)."""
    from seqeval.metrics import f1_score

    return f1_score


def bio(tags) -> list[str]:
    """0/1 word tags as BIO labels: each run of tagged words is one span."""
    labels, previous = [], 0
    for tag in tags:
        labels.append("O" if not tag else ("I-" if previous else "B-") + SPAN)
        previous = tag
    return labels


def sequence_agreement(truth, guess) -> dict:
    """Kappa, span F1 and word accuracy of `guess` against `truth` (lists of 0/1 sequences, aligned)."""
    truth = [[int(tag) for tag in sequence] for sequence in truth]
    guess = [[int(tag) for tag in sequence] for sequence in guess]
    flat_truth = [tag for sequence in truth for tag in sequence]
    flat_guess = [tag for sequence in guess for tag in sequence]
    from sklearn.metrics import cohen_kappa_score  # scikit-learn loads scipy.stats: imported when used

    kappa = cohen_kappa_score(flat_truth, flat_guess) if len(set(flat_truth) | set(flat_guess)) > 1 else np.nan
    return {
        "n_words": len(flat_truth),
        "kappa": kappa,
        "span_f1": _span_f1()([bio(s) for s in truth], [bio(s) for s in guess], zero_division=0),
        # On the 0/1 tags: in BIO labels a span's first word would count as wrong when spans merely abut.
        "word_accuracy": float(np.mean(np.equal(flat_truth, flat_guess))) if flat_truth else np.nan,
    }

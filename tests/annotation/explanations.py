"""Reading a training explanation's claims about the pair and checking them against what the judge sees.

An explanation names words in curly quotes (“its doors”). A clause (text between . ; : ? !) that
speaks of the yellow highlight ("highlighted", "yellow", "counterpart") claims its quoted words
are highlighted, "only" claims no other word is, and "nothing is highlighted" or "every word has a
counterpart" claims no word is; "only moved" claims its quoted words are not highlighted. A clause
that speaks of tagging claims its quoted words are tagged in the reference ("only" / "nothing
else": no other word is), and "nothing to tag" claims the reference tags no word. A sentence is
given as its words, each (comparison key, marked), so the same check reads diff.py's segments
and the rendered page.
"""

import re

CLAUSE = re.compile(r"[^.;:?!]+")
QUOTED = re.compile(r"“([^”]+)”")
NO_HIGHLIGHT = re.compile(r"nothing is highlighted|no word is highlighted|every word has a counterpart", re.I)
HIGHLIGHT = re.compile(r"highlight|yellow|counterpart", re.I)
ONLY_MOVED = re.compile(r"“([^”]+)”\s+only moved", re.I)
NO_TAG = re.compile(r"nothing to tag|no word is tagged", re.I)
TAG = re.compile(r"\btag", re.I)
ONLY = re.compile(r"\bonly\b|nothing else", re.I)
TAGGING_WORDS = re.compile(r"\b(tag|tags|tagged|tagging|untag\w*)\b", re.I)


def key(word):
    return re.sub(r"^\W+|\W+$", "", word).casefold()


def marked_words(segments):
    """(key, marked) per word of a sentence given as diff.py's segments (or anything with .text and .changed)."""
    return [(key(word), segment.changed) for segment in segments for word in segment.text.split() if key(word)]


def tagged_words(words, tags):
    """(key, tagged) per word of a sentence given as its stored tokens and a 0/1 reference tagging."""
    return [(key(word), bool(tag)) for word, tag in zip(words, tags, strict=True) if key(word)]


def _occurrences(phrase, sentences):
    """Each place the phrase's words occur in a row, as the list of their (key, marked)."""
    wanted = [key(word) for word in phrase.split() if key(word)]
    found = []
    for words in sentences:
        for start in range(len(words) - len(wanted) + 1):
            window = words[start : start + len(wanted)]
            if [word for word, _marked in window] == wanted:
                found.append(window)
    return found


def _check_marked(clause, quoted, sentences, what, negated):
    """Problems with the clause's claim that its quoted words are (or, negated, are not) `what`."""
    problems = []
    for phrase in quoted:
        places = _occurrences(phrase, sentences)
        if not places:
            problems.append(f"“{phrase}” is not in the pair")
        elif negated and not any(not any(marked for _word, marked in place) for place in places):
            problems.append(f"“{phrase}” is {what}, but the explanation says it is not")
        elif not negated and not any(all(marked for _word, marked in place) for place in places):
            problems.append(f"“{phrase}” is not {what} throughout")
    all_marked = {word for words in sentences for word, marked in words if marked}
    if negated and not quoted and all_marked:
        problems.append(f"the explanation says no word is {what}, but {sorted(all_marked)} are")
    if not negated and ONLY.search(clause):
        claimed = {key(word) for phrase in quoted for word in phrase.split() if key(word)}
        if all_marked != claimed:
            problems.append(f"“only” {sorted(claimed)} {what}, but {sorted(all_marked)} are")
    return [f"{problem} (in: {clause.strip()!r})" for problem in problems]


def claim_problems(explanation, highlight, reference=None):
    """What the explanation says wrongly about the highlight (and the reference tagging, when given).

    `highlight` and `reference`: the two sentences, each a list of (key, marked).
    """
    problems = []
    for clause in CLAUSE.findall(explanation):
        quoted = QUOTED.findall(clause)
        if NO_HIGHLIGHT.search(clause):
            problems += _check_marked(clause, quoted, highlight, "highlighted", negated=True)
        elif HIGHLIGHT.search(clause):
            problems += _check_marked(clause, quoted, highlight, "highlighted", negated=False)
        elif ONLY_MOVED.search(clause):
            problems += _check_marked(clause, ONLY_MOVED.findall(clause), highlight, "highlighted", negated=True)
        if reference is None:
            continue
        if NO_TAG.search(clause):
            problems += _check_marked(clause, [], reference, "tagged", negated=True)
        elif TAG.search(clause):
            problems += _check_marked(clause, quoted, reference, "tagged", negated=False)
    return problems


def speaks_of_highlight(explanation):
    return bool(HIGHLIGHT.search(explanation) or NO_HIGHLIGHT.search(explanation))


def speaks_of_tagging(explanation):
    return bool(TAGGING_WORDS.search(explanation))

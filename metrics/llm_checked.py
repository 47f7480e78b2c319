"""LLM checked: the oracle's majority verdict, accepted or rejected by a checker (Zeng, Wang and Ibbetson, section 4).

+1: the oracle says yes and the yes-checker builds a phrase alignment whose every
phrase pair the oracle confirms; -1: the oracle says no and passes the no-test (by default
section 5.2.3's: one paraphrase p of one sentence, indifferentiable where one exists, and the
oracle must not call p equivalent to the other sentence); 0: the checker rejects the verdict
(the pair is "unproven"). See the card in README.md.
"""

import random
import re

from scipy.stats import binomtest

from metrics.base import Metric, setting
from metrics.llm_vote import (
    NO,
    YES,
    Prompt,
    ask_votes,
    build_oracle,
    fill,
    prompt_style,
    template_digest,
)
from metrics.loading import default_device, embedded_minilm_path, load_sentence_transformer, model_revision

# The paper leaves "individual prepositional words" out of the coverage check; articles,
# conjunctions and auxiliaries are left out too, as a chunk parse would attach them.
EXEMPT = frozenset(
    "a an the of in on at to for from by with about as into onto over under after before during "
    "and or but is are was were be been it its this that these those".split()
)
PARAPHRASE_PROMPT = "Paraphrase the following sentence. Reply with the paraphrase only.\n'{first}'"
ATTRIBUTION_PROMPT = (
    "Here are two sentences:\n1. '{first}'\n2. '{second}'\n"
    "Which of the two is this text a paraphrase of: '{paraphrase}'\n"
    "Answer with only the number 1 or 2."
)
# The four directional alignments of section 4.3: (covered sentence, mapped from, star = coverage on the target).
DIRECTIONS = {"s1->s2": (0, False), "s1->s2*": (0, True), "s2->s1": (1, False), "s2->s1*": (1, True)}
_WORD = re.compile(r"\w+(?:'\w+)?")
_CHOICE = re.compile(r"\b([12])\b")


def words(sentence):
    """Word tokens; punctuation is never a phrase of its own and never needs covering."""
    return _WORD.findall(sentence)


def phrase_spans(tokens, max_words):
    """Contiguous spans of 2..max_words words, never the whole sentence (the paper's alignment is compositional)."""
    longest = min(max_words, len(tokens) - 1)
    return [(start, start + size) for size in range(2, longest + 1) for start in range(len(tokens) - size + 1)]


def cover(tokens, candidates):
    """Spans (highest similarity first) that together cover every non-exempt token, or None.

    ``candidates`` are (span, payload, similarity); redundant spans are dropped afterwards
    so that each kept phrase pair covers something no other kept one does.
    """
    needed = {i for i, token in enumerate(tokens) if token.lower() not in EXEMPT}
    chosen, covered = [], set()
    for span, payload, similarity in sorted(candidates, key=lambda c: -c[2]):
        new = set(range(*span)) & needed - covered
        if new:
            chosen.append((span, payload, similarity))
            covered |= new
    if covered != needed:
        return None
    for index in range(len(chosen) - 1, -1, -1):  # weakest first
        rest = set().union(*(range(*c[0]) for i, c in enumerate(chosen) if i != index))
        if needed <= rest:
            del chosen[index]
    return chosen


def similarity_matrix(encoder, first_phrases, second_phrases):
    """Cosine similarity of every phrase of the first sentence with every phrase of the second."""
    vectors = encoder.encode(first_phrases + second_phrases, normalize_embeddings=True, convert_to_tensor=True)
    return (vectors[: len(first_phrases)] @ vectors[len(first_phrases) :].T).tolist()


def candidate_alignments(first, second, encoder, *, max_words, threshold):
    """The four directional alignments (section 4.3) as lists of (phrase, phrase) pairs, None where none exists.

    Each phrase of the mapped-from sentence goes to its most similar phrase of the other
    (a directed matching graph, as in Algorithm 1); only mappings at or above ``threshold``
    are kept; coverage is then checked on the mapped-from sentence (rho) or the target (rho*).
    """
    sentences = (words(first), words(second))
    spans = [phrase_spans(tokens, max_words) for tokens in sentences]
    texts = [[" ".join(tokens[a:b]) for a, b in spans_of] for tokens, spans_of in zip(sentences, spans)]
    if not texts[0] or not texts[1]:
        return dict.fromkeys(DIRECTIONS)
    forward = similarity_matrix(encoder, texts[0], texts[1])
    backward = [list(column) for column in zip(*forward)]
    alignments = {}
    for name, (origin, star) in DIRECTIONS.items():
        target = 1 - origin
        matrix = forward if origin == 0 else backward
        candidates = []
        for i, row in enumerate(matrix):
            j = max(range(len(row)), key=row.__getitem__)
            if row[j] >= threshold:
                pair = (texts[origin][i], texts[target][j])
                candidates.append((spans[target][j] if star else spans[origin][i], pair, row[j]))
        chosen = cover(sentences[target] if star else sentences[origin], candidates)
        alignments[name] = None if chosen is None else [pair for _, pair, _ in chosen]
    return alignments


def same_phrase(first, second):
    return words(first.lower()) == words(second.lower())


def yes_check(alignments, confirmed):
    """Which alignments hold once every phrase pair is confirmed, and the paper's phi_or / phi_and."""
    holds = {
        name: pairs is not None and all(same_phrase(*pair) or confirmed[pair] for pair in pairs)
        for name, pairs in alignments.items()
    }
    return {
        "rho": holds,
        "phi_or": any(holds.values()),
        "phi_and": (holds["s1->s2"] or holds["s1->s2*"]) and (holds["s2->s1"] or holds["s2->s1*"]),
    }


def parse_choice(text):
    """1 or 2 from an attribution reply, else None (counted as a wrong attribution)."""
    match = _CHOICE.search(text or "")
    return int(match[1]) if match else None


def clean_paraphrase(text):
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line.strip().strip("'\"").strip()


def usable_paraphrases(first, second, paraphrases):
    """(source index, paraphrase) pairs minus empty ones and verbatim copies of either sentence,
    which would make attribution a string match rather than a test of meaning."""
    kept = []
    for origin, texts in enumerate(paraphrases):
        for text in texts:
            if text and not same_phrase(text, first) and not same_phrase(text, second):
                kept.append((origin, text))
    return kept


def no_check(correct, total, alpha):
    """The binomial option: accept a "no" when the oracle attributes paraphrases right beyond chance
    (one-sided binomial test at ``alpha``).

    If the two sentences meant the same, the oracle could only guess where a paraphrase
    came from (probability 1/2 each, as in the graph non-isomorphism test of section 4).
    """
    if total == 0:
        return {"correct": 0, "n": 0, "p_value": 1.0, "accepted": False}
    p_value = binomtest(correct, total, 0.5, alternative="greater").pvalue
    return {"correct": correct, "n": total, "p_value": p_value, "accepted": bool(p_value <= alpha)}


def minimum_correct(total, alpha):
    """The fewest right attributions out of ``total`` that pass :func:`no_check` (None if none can)."""
    return next((c for c in range(total + 1) if no_check(c, total, alpha)["accepted"]), None)


def has_alignment(alignments, alignment):
    """Whether candidate alignments (no oracle question asked) would give phi_or / phi_and if all were confirmed."""
    found = {name: pairs is not None for name, pairs in alignments.items()}
    if alignment == "or":
        return any(found.values())
    return (found["s1->s2"] or found["s1->s2*"]) and (found["s2->s1"] or found["s2->s1*"])


def choose_test(kept, indifferentiable, rng):
    """Section 5.2.3's choice of the one test: an indifferentiable paraphrase when there is one, else any usable one.

    ``kept``: (side, paraphrase) pairs; ``indifferentiable``: one flag each. Returns (index into kept, flag) or None.
    """
    if not kept:
        return None
    preferred = [i for i, flag in enumerate(indifferentiable) if flag]
    index = rng.choice(preferred or range(len(kept)))
    return index, bool(preferred)


def category(aligned, indifferentiable):
    """Table 5's category: A when s1 and s2 align, I when the test's paraphrase is indifferentiable (bars as '~')."""
    return ("A" if aligned else "~A") + ("I" if indifferentiable else "~I")


class LlmChecked(Metric):
    """+1 accepted yes, -1 accepted no, 0 unproven (the checker rejected the oracle's verdict)."""

    name = "llm_checked"

    def __init__(
        self,
        *,
        model=None,
        prompt=None,
        template=None,
        k=None,
        m=None,
        temperature=None,
        seed=None,
        alignment=None,
        threshold=None,
        max_words=4,
        no_test=None,
        alpha=None,
        yes_on=None,
        **oracle_options,
    ):
        """``prompt``: ``paper`` (prompts 5 and 6, default) or ``one-word`` (LLM_PROMPT); ``no_test``: ``paper``
        (section 5.2.3, default) or ``binomial`` (with ``alpha``); ``yes_on``: ``yes`` (the scheme: yes verdicts
        only) or ``all`` (Table 3: every pair); ``oracle_options``: device, dtype, batch_size."""
        self.k = int(setting("LLM_VOTE_K", 5, value=k))
        self.m = int(setting("LLM_CHECK_M", 5, value=m))
        if self.k < 1 or self.m < 1:
            raise ValueError(f"LLM_VOTE_K and LLM_CHECK_M must be at least 1, got {self.k} and {self.m}")
        self.alignment = setting("LLM_CHECK_ALIGNMENT", "or", choices={"or", "and"}, value=alignment)
        self.threshold = float(setting("LLM_CHECK_THRESHOLD", 0.5, value=threshold))
        self.no_test = setting("LLM_CHECK_NO_TEST", "paper", choices={"paper", "binomial"}, value=no_test)
        self.alpha = float(setting("LLM_CHECK_ALPHA", 0.05, value=alpha))
        self.yes_on = setting("LLM_CHECK_YES_ON", "yes", choices={"yes", "all"}, value=yes_on)
        self.max_words = int(max_words)
        self.prompt_name, (self.prompt, self.phrase_prompt) = prompt_style(prompt)
        if template:
            self.prompt_name, self.prompt = "custom", Prompt(template)
        self.oracle = build_oracle(model=model, temperature=temperature, seed=seed, **oracle_options)
        device = oracle_options.get("device") or setting("LLM_DEVICE", None) or default_device()
        self.encoder_path = embedded_minilm_path()
        self.encoder = load_sentence_transformer(str(self.encoder_path), device)

    def _score_batch_with_details(self, sources, hypotheses):
        details = ask_votes(self.oracle, sources, hypotheses, prompt=self.prompt, k=self.k)
        # Table 3 mode proves every pair; the scheme itself only tries to prove a yes.
        proved = [i for i, detail in enumerate(details) if self.yes_on == "all" or detail["verdict"] == YES]
        no_rows = [i for i, detail in enumerate(details) if detail["verdict"] == NO]
        for i, result in zip(proved, self.check_yes([(sources[i], hypotheses[i]) for i in proved])):
            details[i]["yes_check"] = result
            if details[i]["verdict"] == YES:
                details[i]["accepted"] = result[f"phi_{self.alignment}"]
        for i, result in zip(no_rows, self.check_no([(sources[i], hypotheses[i]) for i in no_rows])):
            details[i]["no_check"] = result
            details[i]["accepted"] = result["accepted"]
        scores = []
        for detail in details:
            detail.setdefault("accepted", False)
            sign = {YES: 1, NO: -1}.get(detail["verdict"], 0)
            scores.append(sign if detail["accepted"] else 0)
        return scores, details

    def align(self, first, second):
        return candidate_alignments(first, second, self.encoder, max_words=self.max_words, threshold=self.threshold)

    def check_yes(self, pairs):
        """Yes-checker for (first, second) pairs: alignments, then one greedy oracle question per phrase pair."""
        alignments = [self.align(a, b) for a, b in pairs]
        questions = sorted(
            {
                pair
                for found in alignments
                for pairs_of in found.values()
                if pairs_of
                for pair in pairs_of
                if not same_phrase(*pair)
            }
        )
        answers = self.oracle.ask(questions, prompt=self.phrase_prompt, k=1, temperature=0)[0] if questions else []
        confirmed = {pair: answer[0] == YES for pair, answer in zip(questions, answers)}
        results = []
        for found in alignments:
            result = yes_check(found, confirmed)
            # Each aligned phrase pair with whether it was confirmed (identical phrases need no question).
            result["phrases"] = {
                name: pairs_of and [[a, b, same_phrase(a, b) or confirmed[(a, b)]] for a, b in pairs_of]
                for name, pairs_of in found.items()
            }
            results.append(result)
        return results

    def paraphrases(self, pairs):
        """m sampled paraphrases of each sentence of each pair: per pair, [of first, of second]."""
        sentences = [sentence for pair in pairs for sentence in pair]
        generated = self.oracle.generate(
            [fill(PARAPHRASE_PROMPT, sentence, "") for sentence in sentences], k=self.m, max_new_tokens=48
        )
        return [
            [[clean_paraphrase(text) for text in generated[2 * index + side]] for side in (0, 1)]
            for index in range(len(pairs))
        ]

    def check_no(self, pairs):
        """No-checker for (first, second) pairs, by LLM_CHECK_NO_TEST."""
        return self.check_no_paper(pairs) if self.no_test == "paper" else self.check_no_binomial(pairs)

    def check_no_paper(self, pairs):
        """Section 5.2.3: one test per pair. A paraphrase p of one sentence is indifferentiable when a candidate
        alignment maps p onto the other sentence (Figure 4); one is preferred, else a usable p is drawn at random.
        The no is accepted when the oracle does not call p equivalent to the other sentence: a yes there is the
        paper's "triangular evidence" against the no."""
        tests = []
        for (first, second), paraphrases in zip(pairs, self.paraphrases(pairs)):
            kept = usable_paraphrases(first, second, paraphrases)
            others = [(second, first)[origin] for origin, _ in kept]
            # rho from p to the other sentence (p covered), as Figure 4 asks of an indifferentiable p.
            flags = [self.align(text, other)["s1->s2"] is not None for (_, text), other in zip(kept, others)]
            aligned = has_alignment(self.align(first, second), self.alignment)
            rng = random.Random(f"{self.oracle.seed}|{first}|{second}")
            chosen = choose_test(kept, flags, rng)
            tests.append((paraphrases, kept, others, aligned, chosen))
        questions = [(others[c[0]], kept[c[0]][1]) for _, kept, others, _, c in tests if c is not None]
        asked = self.oracle.ask(questions, prompt=self.prompt, k=1, temperature=0) if questions else ([], [])
        replies = iter(zip(*asked))
        results = []
        for paraphrases, kept, _others, aligned, chosen in tests:
            result = {"test": "paper", "paraphrases": paraphrases, "aligned": aligned}
            if chosen is None:  # nothing usable to test with: the no stays unproven
                results.append({**result, "category": category(aligned, False), "accepted": False})
                continue
            (answer, *_), (reply, *_) = next(replies)
            index, indifferentiable = chosen
            side, text = kept[index]
            results.append(
                {
                    **result,
                    "category": category(aligned, indifferentiable),
                    "indifferentiable": indifferentiable,
                    "paraphrase": text,
                    "of": side + 1,
                    "answer": answer,
                    "reply": reply,
                    "accepted": answer != YES,  # only a yes is evidence against the no
                }
            )
        return results

    def check_no_binomial(self, pairs):
        """The binomial option: every usable paraphrase attributed greedily, then :func:`no_check`."""
        questions, owners = [], []
        kept_per_pair = []
        for (first, second), paraphrases in zip(pairs, self.paraphrases(pairs)):
            index = len(kept_per_pair)
            kept = usable_paraphrases(first, second, paraphrases)
            kept_per_pair.append((paraphrases, kept))
            # The sentences' order is shuffled per question, so a model that always says "1" scores chance.
            rng = random.Random(f"{self.oracle.seed}|{first}|{second}")
            for origin, text in kept:
                swap = rng.random() < 0.5
                shown = (second, first) if swap else (first, second)
                right = (2 if origin == 0 else 1) if swap else origin + 1
                questions.append(fill(ATTRIBUTION_PROMPT, *shown, paraphrase=text))
                owners.append((index, right))
        replies = self.oracle.generate(questions, k=1, temperature=0, max_new_tokens=4) if questions else []
        correct = [0] * len(pairs)
        attributions = [[] for _ in pairs]
        for (index, right), reply in zip(owners, replies):
            choice = parse_choice(reply[0])
            correct[index] += choice == right
            attributions[index].append([right, choice])
        results = []
        for index, (paraphrases, kept) in enumerate(kept_per_pair):
            result = no_check(correct[index], len(kept), self.alpha)
            results.append(
                {**result, "test": "binomial", "paraphrases": paraphrases, "attributions": attributions[index]}
            )
        return results

    def _signature_fields(self):
        templates = template_digest(self.prompt, self.phrase_prompt, PARAPHRASE_PROMPT, ATTRIBUTION_PROMPT)
        no_test = "paper" if self.no_test == "paper" else f"binomial<={self.alpha}"
        return {
            **self.oracle.signature_fields(),
            "k": str(self.k),
            "m": str(self.m),
            "prompt": self.prompt_name,
            "template": templates,
            "check": f"phi_{self.alignment},spans2-{self.max_words},sim>={self.threshold},no={no_test}"
            f",yes_on={self.yes_on}",
            "encoder": f"all-MiniLM-L6-v2:{model_revision(str(self.encoder_path))}",
        }

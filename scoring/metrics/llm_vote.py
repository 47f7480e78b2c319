"""LLM vote: a chat LLM asked k times, by sampling, whether S and H are semantically equivalent.

The oracle of the oracle-checker paper (Chang et al., section 2 and 5.2) answers by
generation, not by reading log-probabilities as ParaPLUIE does. The score is the
share of "yes" among the k answers; the raw answers and the self-consistency (share
of the majority answer) are returned as the pair's details.
"""

import hashlib
import re
from collections import Counter
from importlib.metadata import version

import torch

from scoring.metrics.base import Metric, setting
from scoring.metrics.loading import EMBEDDED, default_device, embedded_smollm2_path, load_causal_lm, model_revision

YES, NO = "yes", "no"
UNPARSEABLE = "unparseable"

# Prompt 5 of the paper, shortened: the paper asks GPT-3.5 for JSON with an explanation;
# a one-word answer keeps generation to a few tokens and is what a 135M model can follow.
EQUIVALENCE_PROMPT = (
    "Decide whether the following two sentences are semantically equivalent:\n"
    "1. '{first}'\n2. '{second}'\n"
    "Answer with only one word: yes or no."
)
# Prompt 6 of the paper (phrases "could be considered" equivalent), same shortening.
PHRASE_PROMPT = (
    "Decide whether the following two texts could be considered semantically equivalent:\n"
    "1. '{first}'\n2. '{second}'\n"
    "Answer with only one word: yes or no."
)

_ANSWER_WORD = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


def parse_answer(text):
    """``yes``, ``no`` or ``unparseable``: the first standalone yes/no word wins ("No, 2. yes" is no)."""
    match = _ANSWER_WORD.search(text or "")
    return match[1].lower() if match else UNPARSEABLE


def vote(answers):
    """(verdict, self-consistency, share of yes) of parsed answers.

    The verdict is the majority of yes versus no; a tie, or no parseable answer, has
    no verdict (None). Self-consistency is the share of the most frequent answer,
    unparseable counted as an answer of its own.
    """
    counts = Counter(answers)
    n = len(answers)
    if counts[YES] > counts[NO]:
        verdict = YES
    elif counts[NO] > counts[YES]:
        verdict = NO
    else:
        verdict = None
    consistency = max(counts.values()) / n if n else 0.0
    return verdict, consistency, (counts[YES] / n if n else 0.0)


_PLACEHOLDER = re.compile(r"\{(first|second|paraphrase)\}")


def fill(template, first, second="", paraphrase=""):
    """The prompt text; one regex pass, so braces inside the sentences stay literal."""
    values = {"first": first, "second": second, "paraphrase": paraphrase}
    return _PLACEHOLDER.sub(lambda match: values[match[1]], template)


class Oracle:
    """A chat LLM that answers prompts by sampling: loading is shared, generation is batched."""

    def __init__(self, *, model, device, dtype, temperature, seed, batch_size, max_new_tokens):
        self.model_name, self.temperature, self.seed = model, float(temperature), int(seed)
        self.batch_size, self.max_new_tokens = int(batch_size), int(max_new_tokens)
        self.tokenizer, self.model = load_causal_lm(model, device, dtype)
        self.pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        self.calls = 0  # generations made, for bench/oracle.py

    def prompt_ids(self, text):
        rendered = self.tokenizer.apply_chat_template(
            [{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True
        )
        # The chat template writes any BOS itself.
        return self.tokenizer(rendered, add_special_tokens=False)["input_ids"]

    def generate(self, texts, *, k=1, max_new_tokens=None, temperature=None):
        """k replies per prompt, as lists in input order; temperature 0 is greedy (k identical replies)."""
        temperature = self.temperature if temperature is None else float(temperature)
        max_new_tokens = max_new_tokens or self.max_new_tokens
        prompts = [self.prompt_ids(text) for text in texts]
        replies = [[] for _ in prompts]
        order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]), reverse=True)
        per_batch = max(1, self.batch_size // k) if temperature > 0 else self.batch_size
        for number, start in enumerate(range(0, len(order), per_batch)):
            chunk = order[start : start + per_batch]
            # Seeded per batch: the same inputs in the same order give the same answers.
            torch.manual_seed(self.seed + number)
            rows = self._generate_batch([prompts[i] for i in chunk], k, max_new_tokens, temperature)
            for i, row in zip(chunk, rows):
                replies[i] = row
        return replies

    @torch.inference_mode()
    def _generate_batch(self, prompts, k, max_new_tokens, temperature):
        width = max(len(ids) for ids in prompts)
        # Left padding: every prompt ends where generation starts.
        input_ids = torch.full((len(prompts), width), self.pad_id, dtype=torch.long)
        attention_mask = torch.zeros_like(input_ids)
        for row, ids in enumerate(prompts):
            input_ids[row, width - len(ids) :] = torch.tensor(ids)
            attention_mask[row, width - len(ids) :] = 1
        sampling = temperature > 0
        # top_p/top_k None: plain temperature sampling, whatever the model's generation config says.
        temperature = temperature if sampling else None
        options = {"do_sample": sampling, "temperature": temperature, "top_p": None, "top_k": None}
        output = self.model.generate(
            input_ids=input_ids.to(self.model.device),
            attention_mask=attention_mask.to(self.model.device),
            max_new_tokens=max_new_tokens,
            num_return_sequences=k if sampling else 1,
            pad_token_id=self.pad_id,
            **options,
        )
        texts = self.tokenizer.batch_decode(output[:, width:], skip_special_tokens=True)
        self.calls += len(texts)  # greedy: one reply stands for all k
        if not sampling:
            return [[text.strip()] * k for text in texts]
        return [[text.strip() for text in texts[row * k : (row + 1) * k]] for row in range(len(prompts))]

    def ask(self, pairs, *, template=EQUIVALENCE_PROMPT, k=1, temperature=None):
        """Parsed yes/no answers (k per pair) and the raw replies, for (first, second) text pairs."""
        replies = self.generate([fill(template, a, b) for a, b in pairs], k=k, temperature=temperature)
        return [[parse_answer(reply) for reply in row] for row in replies], replies

    def signature_fields(self):
        if self.model_name == EMBEDDED:
            model, revision = "SmolLM2-135M-Instruct.Q4_1.gguf", model_revision(str(embedded_smollm2_path()))
        else:
            from scoring.metrics.loading import resolve_model_path

            model, revision = self.model_name, model_revision(str(resolve_model_path(self.model_name, "LLM_MODEL")))
        chat = hashlib.sha256((self.tokenizer.chat_template or "").encode()).hexdigest()[:10]
        return {
            "impl": f"parasol-llm+transformers-{version('transformers')}",
            "model": model,
            "rev": revision,
            "dtype": str(self.model.dtype).removeprefix("torch."),
            "chat": chat,
            "sampling": f"t={self.temperature},seed={self.seed},max_new_tokens={self.max_new_tokens}",
        }


def ask_votes(oracle, sources, hypotheses, *, template, k):
    """Per pair: the k parsed answers, the raw replies, the majority verdict, self-consistency, share of yes."""
    answers, replies = oracle.ask(list(zip(sources, hypotheses)), template=template, k=k)
    details = []
    for parsed, raw in zip(answers, replies):
        verdict, consistency, yes_share = vote(parsed)
        details.append(
            {"answers": parsed, "replies": raw, "verdict": verdict, "consistency": consistency, "yes_share": yes_share}
        )
    return details


def template_digest(*templates):
    return hashlib.sha256("\n\x00".join(templates).encode()).hexdigest()[:10]


def build_oracle(*, model=None, device=None, dtype=None, temperature=None, seed=None, batch_size=None):
    """An Oracle from keywords, falling back to LLM_* environment variables (README, Settings)."""
    model = setting("LLM_MODEL", None, value=model) or setting("PARAPLUIE_MODEL", EMBEDDED)
    return Oracle(
        model=model,
        device=setting("LLM_DEVICE", None, value=device) or default_device(),
        dtype=setting("LLM_DTYPE", "auto", choices={"auto", "float32", "bfloat16", "float16"}, value=dtype),
        temperature=float(setting("LLM_TEMPERATURE", 0.7, value=temperature)),
        seed=int(setting("LLM_SEED", 0, value=seed)),
        batch_size=int(setting("LLM_BATCH_SIZE", 16, value=batch_size)),
        max_new_tokens=8,
    )


class LlmVote(Metric):
    """Share of "yes" among k sampled answers to the equivalence question; higher = paraphrase."""

    name = "llm_vote"

    def __init__(self, *, model=None, template=None, k=None, temperature=None, seed=None, **oracle_options):
        """``oracle_options``: device, dtype, batch_size (see :func:`build_oracle`)."""
        self.k = int(setting("LLM_VOTE_K", 5, value=k))
        if self.k < 1:
            raise ValueError(f"LLM_VOTE_K must be at least 1, got {self.k}")
        self.template = template or EQUIVALENCE_PROMPT
        self.oracle = build_oracle(model=model, temperature=temperature, seed=seed, **oracle_options)

    def _score_batch_with_details(self, sources, hypotheses):
        details = ask_votes(self.oracle, sources, hypotheses, template=self.template, k=self.k)
        return [detail["yes_share"] for detail in details], details

    def _signature_fields(self):
        return {**self.oracle.signature_fields(), "k": str(self.k), "template": template_digest(self.template)}

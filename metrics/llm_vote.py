"""LLM vote: a chat LLM asked k times, by sampling, whether S and H are semantically equivalent.

The oracle of the oracle-checker paper (Zeng, Wang and Ibbetson, sections 2 and 5.2) answers by
generation, not by reading log-probabilities as ParaPLUIE does. The score is the
share of "yes" among the k answers; the raw answers, the explanations (prompt 5 asks
for one) and the self-consistency (share of the majority answer) are returned as the pair's details.
"""

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass
from importlib.metadata import version

import torch

from metrics.backends import Backend, ServerClient
from metrics.base import Metric, setting
from metrics.loading import (
    EMBEDDED,
    default_device,
    embedded_smollm2_path,
    load_causal_lm,
    load_chat_tokenizer,
    model_revision,
)

YES, NO = "yes", "no"
UNPARSEABLE = "unparseable"


@dataclass(frozen=True)
class Prompt:
    """A chat prompt: the user message (with {first}/{second}), an optional system message, a reply budget."""

    user: str
    system: str = ""
    max_new_tokens: int = 8


# Prompts 5 and 6 of the paper (appendix B.1), word for word (its typeset quotes as straight ones):
# a system message, then JSON with keys 'answer' and 'explanation'.
PAPER_EQUIVALENCE = Prompt(
    system="You are a helpful assistant that decides if two sentences are paraphrases designed to output JSON.",
    user="Decide whether the following two sentences are semantically equivalent:\n"
    "1. '{first}' 2. '{second}'\n"
    "Answer yes or no and provide a short explanation. Output with keys 'answer' and 'explanation'.",
    max_new_tokens=64,
)
PAPER_PHRASE = Prompt(
    system="You are a helpful assistant that decides if two texts could be paraphrases designed to output JSON.",
    user="Decide whether the following two texts could be considered semantically equivalent:\n"
    "1. '{first}' 2. '{second}'\n"
    "Answer yes or no and provide a short explanation. Output with keys 'answer' and 'explanation'.",
    max_new_tokens=64,
)
# The one-word option: no system message and a reply of a few tokens, what a 135M model follows best.
EQUIVALENCE_PROMPT = Prompt(
    "Decide whether the following two sentences are semantically equivalent:\n"
    "1. '{first}'\n2. '{second}'\n"
    "Answer with only one word: yes or no."
)
PHRASE_PROMPT = Prompt(
    "Decide whether the following two texts could be considered semantically equivalent:\n"
    "1. '{first}'\n2. '{second}'\n"
    "Answer with only one word: yes or no."
)
# LLM_PROMPT names a style: (pair prompt, phrase prompt); the paper's is the default.
PROMPT_STYLES = {"paper": (PAPER_EQUIVALENCE, PAPER_PHRASE), "one-word": (EQUIVALENCE_PROMPT, PHRASE_PROMPT)}


def prompt_style(value=None):
    """The (pair, phrase) prompts of ``value`` or LLM_PROMPT (default: the paper's prompts 5 and 6)."""
    name = setting("LLM_PROMPT", "paper", choices=set(PROMPT_STYLES), value=value)
    return name, PROMPT_STYLES[name]


_ANSWER_WORD = re.compile(r"\b(yes|no)\b", re.IGNORECASE)
_ANSWER_KEY = re.compile(r"""['"]?answer['"]?\s*:\s*['"]?\s*(yes|no)\b""", re.IGNORECASE)
_EXPLANATION_KEY = re.compile(r"""['"]?explanation['"]?\s*:\s*['"]?(.*?)['"]?\s*}?\s*$""", re.IGNORECASE | re.DOTALL)


def parse_answer(text):
    """``yes``, ``no`` or ``unparseable``: an ``answer`` key's value, else the first standalone yes/no word
    ("No, 2. yes" is no)."""
    match = _ANSWER_KEY.search(text or "") or _ANSWER_WORD.search(text or "")
    return match[1].lower() if match else UNPARSEABLE


def parse_explanation(text):
    """The ``explanation`` of a JSON reply (prompt 5), or None; a reply cut off mid-JSON still gives its start."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        value = None
    if isinstance(value, dict) and isinstance(value.get("explanation"), str):
        return value["explanation"]
    match = _EXPLANATION_KEY.search(text or "")
    return match[1].strip() if match else None


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

    def rendered(self, text, system=""):
        messages = [{"role": "system", "content": system}] if system else []
        return self.tokenizer.apply_chat_template(
            [*messages, {"role": "user", "content": text}], tokenize=False, add_generation_prompt=True
        )

    def prompt_ids(self, text, system=""):
        # The chat template writes any BOS itself.
        return self.tokenizer(self.rendered(text, system), add_special_tokens=False)["input_ids"]

    def generate(self, texts, *, k=1, max_new_tokens=None, temperature=None, system=""):
        """k replies per prompt, as lists in input order; temperature 0 is greedy (k identical replies)."""
        temperature = self.temperature if temperature is None else float(temperature)
        max_new_tokens = max_new_tokens or self.max_new_tokens
        prompts = [self.prompt_ids(text, system) for text in texts]
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

    def ask(self, pairs, *, prompt=PAPER_EQUIVALENCE, k=1, temperature=None):
        """Parsed yes/no answers (k per pair) and the raw replies, for (first, second) text pairs."""
        replies = self.generate(
            [fill(prompt.user, a, b) for a, b in pairs],
            k=k,
            temperature=temperature,
            system=prompt.system,
            max_new_tokens=prompt.max_new_tokens,
        )
        return [[parse_answer(reply) for reply in row] for row in replies], replies

    def signature_fields(self):
        if self.model_name == EMBEDDED:
            model, revision = "SmolLM2-135M-Instruct.Q4_1.gguf", model_revision(str(embedded_smollm2_path()))
        else:
            from metrics.loading import resolve_model_path

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


class ServerOracle(Oracle):
    """The same oracle behind an OpenAI-compatible server: prompts rendered here, one request per reply,
    up to the backend's ``max_concurrency`` in flight (a busy server batches them itself)."""

    def __init__(self, *, backend: Backend, temperature, seed, max_new_tokens, **ignored):
        self.model_name, self.temperature, self.seed = backend.model, float(temperature), int(seed)
        self.max_new_tokens, self.backend = int(max_new_tokens), backend
        self.tokenizer = load_chat_tokenizer(backend.tokenizer, "PARASOL_LLM_BACKENDS")
        self.client = ServerClient(backend)
        self.calls = 0

    def generate(self, texts, *, k=1, max_new_tokens=None, temperature=None, system=""):
        temperature = self.temperature if temperature is None else float(temperature)
        options = {"max_tokens": max_new_tokens or self.max_new_tokens, "temperature": temperature}
        prompts = [self.rendered(text, system) for text in texts]
        draws = k if temperature > 0 else 1  # greedy: one reply stands for all k

        def one(job):
            prompt, draw = job
            return self.client.completion(prompt, seed=self.seed + draw, **options)["text"].strip()

        replies = self.client.map(one, [(prompt, draw) for prompt in prompts for draw in range(draws)])
        self.calls += len(replies)
        rows = [replies[i * draws : (i + 1) * draws] for i in range(len(prompts))]
        return rows if draws == k else [row * k for row in rows]

    def signature_fields(self):
        chat = hashlib.sha256((self.tokenizer.chat_template or "").encode()).hexdigest()[:10]
        return {
            "impl": "parasol-llm+completions",
            **self.backend.signature_fields(),
            "chat": chat,
            "sampling": f"t={self.temperature},seed={self.seed},max_new_tokens={self.max_new_tokens}",
        }


def ask_votes(oracle, sources, hypotheses, *, prompt, k):
    """Per pair: the k parsed answers, the raw replies, the majority verdict, self-consistency, share of yes,
    and, for a prompt that asks for one (the paper's), each reply's explanation."""
    answers, replies = oracle.ask(list(zip(sources, hypotheses)), prompt=prompt, k=k)
    details = []
    for parsed, raw in zip(answers, replies):
        verdict, consistency, yes_share = vote(parsed)
        detail = {"answers": parsed, "replies": raw, "verdict": verdict, "consistency": consistency}
        if prompt.system:
            detail["explanations"] = [parse_explanation(reply) for reply in raw]
        details.append({**detail, "yes_share": yes_share})
    return details


def template_digest(*templates):
    """A short hash of prompts (Prompt objects or plain strings): part of a metric's signature."""
    texts = [f"{t.system}\n\x01{t.user}\n\x01{t.max_new_tokens}" if isinstance(t, Prompt) else t for t in templates]
    return hashlib.sha256("\n\x00".join(texts).encode()).hexdigest()[:10]


def build_oracle(*, model=None, device=None, dtype=None, temperature=None, seed=None, batch_size=None, backend=None):
    """An Oracle from keywords, falling back to LLM_* environment variables (README, Settings);
    ``backend`` (a campaign's LLM backend): a server asked over HTTP, or the in-process model it names."""
    if backend is not None and backend.is_server:
        temperature = float(setting("LLM_TEMPERATURE", 0.7, value=temperature))
        return ServerOracle(
            backend=backend, temperature=temperature, seed=int(setting("LLM_SEED", 0, value=seed)), max_new_tokens=8
        )
    if backend is not None and backend.model and model is None:
        model = backend.model
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

    def __init__(
        self, *, model=None, prompt=None, template=None, k=None, temperature=None, seed=None, **oracle_options
    ):
        """``prompt``: ``paper`` (prompt 5, default) or ``one-word`` (LLM_PROMPT); ``template``: a user
        message of one's own (no system message) instead; ``oracle_options``: device, dtype, batch_size."""
        self.k = int(setting("LLM_VOTE_K", 5, value=k))
        if self.k < 1:
            raise ValueError(f"LLM_VOTE_K must be at least 1, got {self.k}")
        self.prompt_name, (self.prompt, _) = prompt_style(prompt)
        if template:
            self.prompt_name, self.prompt = "custom", Prompt(template)
        self.oracle = build_oracle(model=model, temperature=temperature, seed=seed, **oracle_options)

    def _score_batch_with_details(self, sources, hypotheses):
        details = ask_votes(self.oracle, sources, hypotheses, prompt=self.prompt, k=self.k)
        return [detail["yes_share"] for detail in details], details

    def _signature_fields(self):
        return {
            **self.oracle.signature_fields(),
            "k": str(self.k),
            "prompt": f"{self.prompt_name},max_new_tokens={self.prompt.max_new_tokens}",
            "template": template_digest(self.prompt),
        }

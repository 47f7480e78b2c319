"""ParaPLUIE (Lemesle et al.): log p(yes | Tpl(S, H)) - log p(no | Tpl(S, H)) from a chat LLM.

One forward pass per pair reads both log-probabilities at the answer position; this
equals the paper's (T+1) * (loss(Tpl∘no) - loss(Tpl∘yes)) because the two sequences
share every predicted token but the last. Pairs are sorted by length and batched
(right padding, so positions need no shifting), and the template's prefix (every
token before the source sentence) is run once and reused as a KV cache.

Through a server backend (``backend``, an OpenAI-compatible server), each pair is one
``/completions`` call on the same rendered prompt with one generated token and the top
log-probabilities; the server's prefix cache plays the part of the KV cache above.
"""

import hashlib
import json
import re
from importlib.metadata import version
from typing import ClassVar

import torch

from metrics.backends import Backend, ServerClient
from metrics.base import Metric, PairFailed, setting
from metrics.loading import (
    EMBEDDED,
    default_device,
    embedded_smollm2_path,
    load_causal_lm,
    load_chat_tokenizer,
    model_revision,
    resolve_model_path,
)
from metrics.parapluie_templates import INDIRECT_FOLLOW_UP, TEMPLATES

# How "yes" and "no" become tokens (README, "Yes/No tokens"): the first token of the
# assistant's reply "Yes"/"No" (the default, the form the few-shot answers use), of
# "yes"/"no", or the log-sum-exp over "yes", "Yes", " yes", " Yes" (and the same for no).
ANSWER_MODES = {"Yes/No": (["Yes"], ["No"]), "yes/no": (["yes"], ["no"])}
ANSWER_MODES["variants"] = (["yes", "Yes", " yes", " Yes"], ["no", "No", " no", " No"])

_PLACEHOLDER = re.compile(r"\{(source|hypothesis)\}")
_SENTINEL = "\ue000"  # a private-use character: marks where the source starts


def fill(turns, source, hypothesis):
    """Chat messages of a template; one regex pass, so braces inside the sentences stay literal."""
    values = {"source": source, "hypothesis": hypothesis}
    return [{"role": role, "content": _PLACEHOLDER.sub(lambda m: values[m[1]], text)} for role, text in turns]


def render(tokenizer, messages):
    """The conversation through the model's own chat template, ending where the assistant's reply starts."""
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def encode(tokenizer, texts):
    # The chat template writes any BOS itself; add_special_tokens would double it.
    return tokenizer(texts, add_special_tokens=False)["input_ids"]


def answer_token_ids(tokenizer, mode):
    """Token ids for yes and no: the first token each word takes right after the generation prompt."""
    prompt = render(tokenizer, [{"role": "user", "content": "?"}])
    base = encode(tokenizer, prompt)

    def first_reply_token(word):
        ids = encode(tokenizer, prompt + word)
        if ids[: len(base)] != base or len(ids) == len(base):
            raise ValueError(f"cannot isolate the first token of the reply {word!r} in this tokenizer")
        return ids[len(base)]

    yes_words, no_words = ANSWER_MODES[mode]
    yes = sorted({first_reply_token(word) for word in yes_words})
    no = sorted({first_reply_token(word) for word in no_words})
    if set(yes) & set(no):
        raise ValueError(f"yes and no share a first token under PARAPLUIE_ANSWER={mode!r}")
    return yes, no


def log_odds(logits, yes_ids, no_ids):
    """log p(yes) - log p(no) per row of next-token logits; several ids per answer are summed in probability."""
    log_probs = torch.log_softmax(logits.float(), dim=-1)
    return torch.logsumexp(log_probs[:, yes_ids], dim=-1) - torch.logsumexp(log_probs[:, no_ids], dim=-1)


# The same bias on every answer token keeps log p(yes) - log p(no) unchanged and lifts
# them all above any other token, so the server's top log-probabilities include them.
ANSWER_BIAS = 100


def answer_log_odds(top_logprobs, yes_pieces, no_pieces):
    """log p(yes) - log p(no) from one position's {token text: log-prob}; None when an answer token is missing."""
    if not all(piece in top_logprobs for piece in (*yes_pieces, *no_pieces)):
        return None
    yes = torch.logsumexp(torch.tensor([float(top_logprobs[p]) for p in yes_pieces], dtype=torch.float64), 0)
    no = torch.logsumexp(torch.tensor([float(top_logprobs[p]) for p in no_pieces], dtype=torch.float64), 0)
    return float(yes - no)


@torch.inference_mode()
def prefix_cache(model, prefix_ids):
    """Per-layer (keys, values) of the shared prefix, batch 1; never written to afterwards."""
    input_ids = torch.tensor([prefix_ids], device=model.device)
    cache = model(input_ids=input_ids, use_cache=True).past_key_values
    return [(layer.keys, layer.values) for layer in cache.layers]


@torch.inference_mode()
def next_token_logits(model, sequences, prefix_length=0, prefix=None, pad_id=0):
    """Logits after the last token of each sequence, in one batched pass.

    With ``prefix`` (from :func:`prefix_cache`), every sequence starts with the same
    ``prefix_length`` tokens and only the rest is run. Right padding keeps each
    sequence's positions unchanged; pads only come after the tokens that are read.
    """
    from transformers import DynamicCache

    suffixes = [sequence[prefix_length:] for sequence in sequences]
    batch, width = len(suffixes), max(len(suffix) for suffix in suffixes)
    input_ids = torch.full((batch, width), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((batch, prefix_length + width), dtype=torch.long)
    attention_mask[:, :prefix_length] = 1
    for row, suffix in enumerate(suffixes):
        input_ids[row, : len(suffix)] = torch.tensor(suffix)
        attention_mask[row, prefix_length : prefix_length + len(suffix)] = 1
    last = torch.tensor([len(suffix) - 1 for suffix in suffixes])
    keep = torch.unique(last)  # sorted; the LM head runs on these columns only
    position_ids = torch.arange(prefix_length, prefix_length + width).expand(batch, -1)
    cache = None
    if prefix is not None:
        # A fresh cache per batch: expand() is a view and update() concatenates into
        # new tensors, so the cached prefix is never mutated.
        cache = DynamicCache(
            ddp_cache_data=[(k.expand(batch, *k.shape[1:]), v.expand(batch, *v.shape[1:])) for k, v in prefix]
        )
    device = model.device
    output = model(
        input_ids=input_ids.to(device),
        attention_mask=attention_mask.to(device),
        position_ids=position_ids.to(device),
        past_key_values=cache,
        use_cache=cache is not None,
        logits_to_keep=keep.to(device),
    )
    columns = torch.searchsorted(keep, last).to(device)
    return output.logits[torch.arange(batch, device=device), columns]


class ParaPluie(Metric):
    """Log-likelihood ratio of "yes" versus "no" after a template (paper, section 3)."""

    template: ClassVar[str]

    def __init__(
        self,
        *,
        model=None,
        device=None,
        dtype=None,
        answer=None,
        batch_size=None,
        max_new_tokens=None,
        reuse_prefix=True,
        loaded=None,
        backend: Backend | None = None,
    ):
        """Settings fall back to PARAPLUIE_* variables; ``loaded`` = (tokenizer, model) skips loading (benchmarks).

        ``backend``: where the LLM runs (``metrics.backends``); an in-process one names
        the model to load, a server one is asked over HTTP and only its tokenizer is loaded here.
        """
        if backend is not None and not backend.is_server and backend.model and model is None:
            model = backend.model
        self.backend = backend if backend is not None and backend.is_server else None
        self.model_name = setting("PARAPLUIE_MODEL", EMBEDDED, value=model)
        self.device = setting("PARAPLUIE_DEVICE", None, value=device) or default_device()
        self.dtype = setting("PARAPLUIE_DTYPE", "auto", choices={"auto", "float32", "bfloat16", "float16"}, value=dtype)
        self.answer = setting("PARAPLUIE_ANSWER", "Yes/No", choices=set(ANSWER_MODES), value=answer)
        self.batch_size = int(setting("PARAPLUIE_BATCH_SIZE", 8, value=batch_size))
        self.max_new_tokens = int(setting("PARAPLUIE_MAX_NEW_TOKENS", 64, value=max_new_tokens))
        self.reuse_prefix = reuse_prefix
        self.client = None
        if self.backend is not None:
            self.tokenizer, self.model = load_chat_tokenizer(self.backend.tokenizer, "PARASOL_LLM_BACKENDS"), None
            self.client = ServerClient(self.backend)
        elif loaded is None:
            self.tokenizer, self.model = load_causal_lm(self.model_name, self.device, self.dtype)
        else:
            self.tokenizer, self.model = loaded
            self.model_name = f"injected:{self.model.config.model_type}"
        self.yes_ids, self.no_ids = answer_token_ids(self.tokenizer, self.answer)
        self.yes_pieces = [self.tokenizer.decode([i]) for i in self.yes_ids]
        self.no_pieces = [self.tokenizer.decode([i]) for i in self.no_ids]
        self.pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        self._prefix = None

    @property
    def turns(self):
        return TEMPLATES[self.template]

    # Building sequences.

    def conversation(self, source, hypothesis, explanation=None):
        return fill(self.turns, source, hypothesis)

    def sequence_ids(self, source, hypothesis, explanation=None):
        """Token ids of Tpl(S, H), ending where the answer token goes."""
        return encode(self.tokenizer, render(self.tokenizer, self.conversation(source, hypothesis, explanation)))

    def shared_prefix(self):
        """(ids, KV cache) of everything before the source; its last token is left out of the
        prefix because a tokenizer may merge it with the first characters of the source."""
        if self._prefix is None:
            text = render(self.tokenizer, fill(self.turns, _SENTINEL, ""))
            ids = encode(self.tokenizer, text[: text.index(_SENTINEL)])[:-1]
            self._prefix = (ids, prefix_cache(self.model, ids))
        return self._prefix

    # Scoring.

    def prompt(self, source, hypothesis, explanation=None):
        """Tpl(S, H) as text, ending where the answer token goes (what a server backend completes)."""
        return render(self.tokenizer, self.conversation(source, hypothesis, explanation))

    def _score_batch(self, sources, hypotheses):
        if self.client is not None:
            prompts = [self.prompt(s, h) for s, h in zip(sources, hypotheses)]
            return self.client.map(self.server_log_odds, prompts, each_alone=True)
        return self.score_sequences([self.sequence_ids(s, h) for s, h in zip(sources, hypotheses)])

    def server_log_odds(self, prompt):
        """One generated token and its top log-probabilities. If an answer token is missing: again with as many
        as the backend returns (``max_logprobs``, at most the whole vocabulary: then none can be missing), then
        with the answers biased; else unavailable, never a guess."""
        backend = self.backend
        value = answer_log_odds(self._top_logprobs(prompt, logprobs=backend.top_logprobs), *self._pieces)
        widest = min(backend.max_logprobs, len(self.tokenizer))
        if value is None and widest > backend.top_logprobs:
            value = answer_log_odds(self._top_logprobs(prompt, logprobs=widest), *self._pieces)
        if value is None and backend.logit_bias:
            bias = {str(i): ANSWER_BIAS for i in (*self.yes_ids, *self.no_ids)}
            value = answer_log_odds(self._top_logprobs(prompt, logprobs=len(bias), logit_bias=bias), *self._pieces)
        if value is None:  # this pair's answer lacks them: that pair fails, with why
            raise PairFailed(
                f"{self.name} could not be read from backend {backend.name!r}: the answer tokens "
                f"{self.yes_pieces + self.no_pieces} are not among its top log-probabilities "
                f"(asked for {max(widest, backend.top_logprobs)} of {len(self.tokenizer)}: raise its max_logprobs)"
                + ("" if backend.logit_bias else "; it does not take logit_bias")
            )
        return value

    @property
    def _pieces(self):
        return self.yes_pieces, self.no_pieces

    def _top_logprobs(self, prompt, **options):
        choice = self.client.completion(prompt, max_tokens=1, temperature=0, **options)
        try:
            return choice["logprobs"]["top_logprobs"][0] or {}
        except (KeyError, IndexError, TypeError):
            raise PairFailed(
                f"backend {self.backend.name!r} returned no log-probabilities: {self.name} needs them"
            ) from None

    def score_sequences(self, sequences):
        """Log-odds for token sequences, batched by length, with the prefix cache where it applies."""
        prefix_ids, prefix = self.shared_prefix() if self.reuse_prefix else ([], None)
        n = len(prefix_ids)
        scores = [0.0] * len(sequences)
        shared = [i for i, ids in enumerate(sequences) if n and ids[:n] == prefix_ids and len(ids) > n]
        alone = sorted(set(range(len(sequences))) - set(shared))
        for indices, length, cache in ((shared, n, prefix), (alone, 0, None)):
            indices = sorted(indices, key=lambda i: len(sequences[i]), reverse=True)
            for start in range(0, len(indices), self.batch_size):
                chunk = indices[start : start + self.batch_size]
                logits = next_token_logits(self.model, [sequences[i] for i in chunk], length, cache, self.pad_id)
                for i, value in zip(chunk, log_odds(logits, self.yes_ids, self.no_ids).tolist()):
                    scores[i] = value
        return scores

    @torch.inference_mode()
    def reference_log_odds(self, source, hypothesis, explanation=None):
        """The paper's formulation, (T+1) * (loss(Tpl∘no) - loss(Tpl∘yes)): two full passes, batch 1, no cache.

        The naive baseline of bench/parapluie.py. The model's float32 mean loss, multiplied
        back by ~550 tokens (FS-DIRECT), drifts by ~1e-4 from :meth:`score`; the tests
        reduce in float64 instead. Needs single-token answers (not ``variants``).
        """
        template = self.sequence_ids(source, hypothesis, explanation)
        losses = {}
        for answer, ids in (("yes", self.yes_ids), ("no", self.no_ids)):
            input_ids = torch.tensor([template + ids[:1]], device=self.model.device)
            losses[answer] = self.model(input_ids=input_ids, labels=input_ids).loss.item()
        predicted = len(template)  # T+1: every token of Tpl∘answer but the first is predicted
        return predicted * (losses["no"] - losses["yes"])

    def _signature_fields(self):
        digest = hashlib.sha256(json.dumps([self.turns, INDIRECT_FOLLOW_UP]).encode()).hexdigest()[:10]
        chat = hashlib.sha256((self.tokenizer.chat_template or "").encode()).hexdigest()[:10]
        prompt = {
            "template": f"{self.template}:{digest}",
            "chat": chat,
            "answer": f"{self.answer}:{','.join(map(str, self.yes_ids))}/{','.join(map(str, self.no_ids))}",
        }
        if self.backend is not None:
            # A server's arithmetic (quantisation, kernels) is its own: never mixed with in-process scores.
            return {"impl": "parasol-parapluie+completions-logprobs", **self.backend.signature_fields(), **prompt}
        if self.model_name == EMBEDDED:
            model, revision = "SmolLM2-135M-Instruct.Q4_1.gguf", model_revision(str(embedded_smollm2_path()))
        elif self.model_name.startswith("injected:"):
            model, revision = self.model_name, "random-or-unknown"
        else:
            path = resolve_model_path(self.model_name, "PARAPLUIE_MODEL")
            model, revision = self.model_name, model_revision(str(path))
        return {
            "impl": f"parasol-parapluie+transformers-{version('transformers')}",
            "model": model,
            "rev": revision,
            "dtype": str(self.model.dtype).removeprefix("torch."),
            **prompt,
        }


class ParaPluieDirect(ParaPluie):
    name = "parapluie_direct"
    template = "direct"


class ParaPluieFewShotDirect(ParaPluie):
    name = "parapluie_fs_direct"
    template = "fs_direct"


class ParaPluieIndirect(ParaPluie):
    """INDIRECT: the model first explains (greedy, at most ``max_new_tokens``), then answers in one word."""

    name = "parapluie_indirect"
    template = "indirect"

    def conversation(self, source, hypothesis, explanation=None):
        messages = fill(self.turns, source, hypothesis)
        if explanation is None:
            return messages
        return [*messages, {"role": "assistant", "content": explanation}, *fill(INDIRECT_FOLLOW_UP, "", "")]

    def _score_batch(self, sources, hypotheses):
        explanations = self.explain(sources, hypotheses)
        if self.client is not None:
            prompts = [self.prompt(s, h, e) for s, h, e in zip(sources, hypotheses, explanations)]
            return self.client.map(self.server_log_odds, prompts, each_alone=True)
        return self.score_sequences([self.sequence_ids(s, h, e) for s, h, e in zip(sources, hypotheses, explanations)])

    def explain_through_server(self, prompt):
        choice = self.client.completion(prompt, max_tokens=self.max_new_tokens, temperature=0)
        return choice["text"].strip()

    @torch.inference_mode()
    def explain(self, sources, hypotheses):
        """The explanation E for each pair: greedy generation, batched with left padding."""
        if self.client is not None:
            return self.client.map(
                self.explain_through_server, [self.prompt(s, h) for s, h in zip(sources, hypotheses)]
            )
        prompts = [self.sequence_ids(s, h) for s, h in zip(sources, hypotheses)]
        explanations = [""] * len(prompts)
        order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]), reverse=True)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            width = max(len(prompts[i]) for i in chunk)
            input_ids = torch.full((len(chunk), width), self.pad_id, dtype=torch.long)
            attention_mask = torch.zeros_like(input_ids)
            for row, i in enumerate(chunk):
                input_ids[row, width - len(prompts[i]) :] = torch.tensor(prompts[i])
                attention_mask[row, width - len(prompts[i]) :] = 1
            output = self.model.generate(
                input_ids=input_ids.to(self.model.device),
                attention_mask=attention_mask.to(self.model.device),
                max_new_tokens=self.max_new_tokens,
                do_sample=False,
                temperature=None,
                top_p=None,
                top_k=None,
                pad_token_id=self.pad_id,
            )
            for row, i in enumerate(chunk):
                explanations[i] = self.tokenizer.decode(output[row, width:], skip_special_tokens=True).strip()
        return explanations

    def _signature_fields(self):
        return {**super()._signature_fields(), "explain": f"greedy,max_new_tokens={self.max_new_tokens}"}

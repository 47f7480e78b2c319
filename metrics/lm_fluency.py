"""LM_FLUENCY: PEM's normalised language-model score of the hypothesis, read from an LLM.

PEM (Liu et al., section 4.4) measures fluency with P_n = log Pr(S) / length(S) under a
4-gram language model. Here Pr(S) comes from the configured causal LLM (the embedded
SmolLM2-135M by default: a working pipeline, not a strong fluency model), as the sum of the
log-probabilities of the hypothesis's tokens after a start token *and of the end token after
them*: an n-gram LM's sentence probability (SRILM's) includes the end-of-sentence event, and
without it a sentence cut short would look as fluent as a whole one. ``norm`` picks the
length: ``word`` (default: the words of the sentence, punctuation marks not counted, as PEM's
length(S) counts words) or ``token`` (the LLM's tokens). Only the hypothesis is read; higher
means more fluent.
"""

from importlib.metadata import version

import torch

from metrics.base import Metric, setting
from metrics.loading import EMBEDDED, default_device, load_causal_lm
from metrics.words import word_tokens

NORMS = ("word", "token")


def sentence_log_probs(model, token_lists, start_id, pad_id):
    """Sum of log Pr(token | tokens before) over each list, every list preceded by `start_id`."""
    longest = max(len(tokens) for tokens in token_lists) + 1
    ids = torch.full((len(token_lists), longest), pad_id, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for row, tokens in enumerate(token_lists):
        ids[row, : len(tokens) + 1] = torch.tensor([start_id, *tokens])
        mask[row, : len(tokens) + 1] = 1
    with torch.inference_mode():
        logits = model(input_ids=ids.to(model.device), attention_mask=mask.to(model.device)).logits.float()
    log_probs = torch.log_softmax(logits[:, :-1], dim=-1)
    targets = ids[:, 1:].to(model.device)
    picked = log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1) * mask[:, 1:].to(model.device)
    return picked.sum(dim=1).tolist()


def word_count(text):
    """PEM's length(S): the sentence's words, a punctuation mark not counting as one (at least 1)."""
    # Tokenisation 1, which this version's stored scores were computed with (2 would count 4.56 as one word).
    return max(1, sum(1 for token in word_tokens(text, 1) if any(character.isalnum() for character in token)))


class LmFluency(Metric):
    name = "lm_fluency"
    version = "2"  # version 1 left out the end token and counted punctuation marks as words

    def __init__(self, *, model=None, device=None, dtype=None, norm=None, batch_size=None):
        self.model_name = setting("LM_FLUENCY_MODEL", None, value=model) or setting("PARAPLUIE_MODEL", EMBEDDED)
        self.device = setting("PARAPLUIE_DEVICE", None, value=device) or default_device()
        self.dtype = setting("PARAPLUIE_DTYPE", "auto", choices={"auto", "float32", "bfloat16", "float16"}, value=dtype)
        self.norm = setting("LM_FLUENCY_NORM", "word", choices=set(NORMS), value=norm)
        self.batch_size = int(setting("PARAPLUIE_BATCH_SIZE", 8, value=batch_size))
        self.tokenizer, self.model = load_causal_lm(self.model_name, self.device, self.dtype)
        tokenizer = self.tokenizer
        self.start_id = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
        self.end_id = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else self.start_id
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.start_id

    def _score_batch(self, sources, hypotheses):
        scores = [0.0] * len(hypotheses)
        # Every sentence ends with the end token (an empty one is Pr(end | start) alone).
        encoded = [[*self.tokenizer.encode(text, add_special_tokens=False), self.end_id] for text in hypotheses]
        # Sorted by length so each batch pads little; scores go back to input order.
        order = sorted(range(len(hypotheses)), key=lambda index: len(encoded[index]))
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            totals = sentence_log_probs(self.model, [encoded[i] for i in batch], self.start_id, self.pad_id)
            for index, total in zip(batch, totals):
                scores[index] = total / self._length(hypotheses[index], encoded[index])
        return scores

    def _length(self, text, tokens):
        # `tokens` ends with the end token, which is no token of the sentence.
        return word_count(text) if self.norm == "word" else max(1, len(tokens) - 1)

    def _signature_fields(self):
        return {
            "impl": f"parasol-lm-fluency+transformers-{version('transformers')}",
            "model": self.model_name,
            "dtype": str(self.model.dtype).removeprefix("torch."),
            "norm": self.norm,
            "end": "eos",
        }

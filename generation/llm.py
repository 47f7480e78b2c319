"""The chat LLM behind generation: which models may be used, loading, rendering prompts, generating.

A run names its model: ``embedded`` (the SmolLM2-135M-Instruct shipped with
Parasol) or a name from the GENERATION_MODELS setting, which maps names to
local directories, .gguf files or hub names already cached, or the name of an
OpenAI-compatible server backend of PARASOL_LLM_BACKENDS (a lab's vLLM, llama.cpp or a
hosted API). Researchers never give a server path or URL: a path would let them probe the
server's files, a URL reach its network.
"""

import logging
from functools import lru_cache
from typing import NamedTuple

from django.conf import settings

from metrics.backends import ServerClient
from metrics.base import MetricUnavailable, PairFailed
from metrics.loading import (
    EMBEDDED,
    chat_model_path,
    default_device,
    load_causal_lm,
    load_chat_tokenizer,
    model_revision,
)
from metrics.untrusted import shown
from parasol.llm_backends import MESSAGE_CHARS

from .errors import GenerationError

SETTING = "GENERATION_MODELS"
logger = logging.getLogger(__name__)


def server_backend(model):
    """The server backend a run's model name names, or None (a model loaded in the worker)."""
    backend = settings.PARASOL_LLM_BACKENDS.get(model)
    return backend if backend is not None and backend.is_server else None


def model_names():
    """The models a run may name: ``embedded`` first, then the configured ones, then the server backends."""
    servers = [name for name in settings.PARASOL_LLM_BACKENDS if server_backend(name)]
    return [EMBEDDED, *settings.GENERATION_MODELS, *servers]


def model_location(model):
    """What the loader gets for a model name; GenerationError for a name that is not configured."""
    if model == EMBEDDED:
        return EMBEDDED
    if server_backend(model) is not None:
        return server_backend(model).tokenizer  # rendered here with the served model's tokenizer
    if model in settings.GENERATION_MODELS:
        return settings.GENERATION_MODELS[model]
    shown = model if len(model) <= 100 else model[:100] + "…"
    raise GenerationError(
        f"unknown model {shown!r}: use one of {', '.join(model_names())} "
        f"(models are named in the {SETTING} setting, never given as paths)"
    )


def check_model(model):
    """The local file or directory of a model name; GenerationError unless it is usable (nothing is downloaded)."""
    if not model:
        raise GenerationError(f"no model given: use one of {', '.join(model_names())}")
    try:
        return chat_model_path(model_location(model), SETTING)
    except MetricUnavailable as error:
        if model == EMBEDDED:
            raise GenerationError(f"the embedded model is not installed ({error})") from None
        raise GenerationError(f"model {model!r} cannot be used: {error}") from None


def chat_tokenizer(model):
    """The model's tokenizer alone (the live preview needs no weights); cached per process."""
    check_model(model)
    try:
        return load_chat_tokenizer(model_location(model), SETTING)
    except MetricUnavailable as error:
        raise GenerationError(str(error)) from None


def render_chat(tokenizer, messages):
    """The prompt text the model sees, through its own chat template."""
    try:
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    except Exception as error:  # jinja raises TemplateError, e.g. Mistral's on a system message
        raise GenerationError(f"the model's chat template refuses this conversation: {error}") from None


def generate_texts(tokenizer, llm, prompts, *, decoding, n=1, seed=0):
    """For each prompt, ``n`` `Candidate`s; ``finished`` is False when cut at max_new_tokens."""
    import torch

    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))  # similar lengths pad less
    encoded = tokenizer(
        [prompts[i] for i in order], return_tensors="pt", padding=True, padding_side="left", add_special_tokens=False
    ).to(llm.device)
    options = {"max_new_tokens": decoding["max_new_tokens"], "num_return_sequences": n}
    if decoding["strategy"] == "sampling":
        options.update(do_sample=True, temperature=decoding["temperature"], top_p=decoding["top_p"])
    else:
        options.update(do_sample=False, temperature=None, top_p=None, top_k=None)
    torch.manual_seed(seed)
    with torch.inference_mode():
        output = llm.generate(**encoded, pad_token_id=tokenizer.pad_token_id, **options)
    new_tokens = output[:, encoded["input_ids"].shape[1] :]
    texts = tokenizer.batch_decode(new_tokens, skip_special_tokens=True)
    stops = _stop_ids(tokenizer, llm)
    finished = [bool(stops & set(row.tolist())) for row in new_tokens]
    results = [None] * len(prompts)
    for rank, index in enumerate(order):
        rows = range(rank * n, rank * n + n)
        results[index] = [Candidate(texts[row], finished[row]) for row in rows]
    return results


def _stop_ids(tokenizer, llm):
    ids = llm.generation_config.eos_token_id
    ids = set(ids if isinstance(ids, list) else [ids])
    return {i for i in ids | {tokenizer.eos_token_id} if i is not None}


class Candidate(NamedTuple):
    """One generated candidate: its text, whether the model ended it (False: cut at max_new_tokens), and, for a
    candidate the server refused or answered unusably, the server's words (cleaned, cut) instead of a text."""

    text: str
    finished: bool
    failure: str = ""


class Generator:
    """One chat LLM, loaded once per process: renders prompts and generates."""

    def __init__(self, model):
        path = check_model(model)
        try:
            self.tokenizer, self.llm = load_causal_lm(model_location(model), default_device(), "auto", SETTING)
        except MetricUnavailable as error:
            raise GenerationError(f"cannot load model {model!r}: {error}") from None
        self.model, self.revision = model, model_revision(path)

    def render(self, messages):
        return render_chat(self.tokenizer, messages)

    def generate(self, prompts, *, decoding, n, seed):
        return generate_texts(self.tokenizer, self.llm, prompts, decoding=decoding, n=n, seed=seed)


class ServerGenerator:
    """A chat LLM behind an OpenAI-compatible server: prompts rendered here, completions there, concurrently."""

    def __init__(self, model):
        check_model(model)  # the served model's tokenizer is here
        backend = server_backend(model)
        self.tokenizer = chat_tokenizer(model)
        self.client = ServerClient(backend)
        self.model, self.revision = model, f"{backend.model}@{backend.revision}"

    def render(self, messages):
        return render_chat(self.tokenizer, messages)

    def generate(self, prompts, *, decoding, n, seed):
        """``n`` (text, finished) candidates per prompt: one request each (seed + k), as many in flight as allowed."""
        options = {"max_tokens": decoding["max_new_tokens"]}
        if decoding["strategy"] == "sampling":
            options.update(temperature=decoding["temperature"], top_p=decoding["top_p"])
        else:
            options.update(temperature=0)

        def one(job):
            """A candidate (its text cleaned by the client); a refused or unusable answer is a failed candidate,
            rejected with the server's words: that candidate fails, never the run."""
            prompt, candidate_seed = job
            try:
                choice = self.client.completion(prompt, seed=candidate_seed, **options)
            except PairFailed as error:
                logger.warning("A candidate of model %s failed: %s", self.model, error)
                return Candidate("", False, shown(str(error))[:MESSAGE_CHARS] or "no usable answer")
            return Candidate(choice["text"], choice.get("finish_reason") == "stop")

        answers = self.client.map(one, [(prompt, seed + k) for prompt in prompts for k in range(n)])
        return [answers[i * n : i * n + n] for i in range(len(prompts))]


@lru_cache(maxsize=1)
def get_generator(model):
    return ServerGenerator(model) if server_backend(model) is not None else Generator(model)

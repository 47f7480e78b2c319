"""Named LLM backends: the in-process transformers model, or an OpenAI-compatible server.

A deployment declares its backends by name (PARASOL_LLM_BACKENDS, parsed here so the
metrics stay usable without Django); a campaign names one. A server backend holds its
base URL and the *name* of the environment variable with its API key, never the key:
the key is read when a request is sent, so it is in no object, signature or log.

The client is httpx (sync, pooled, explicit timeouts) rather than the ``openai`` package:
Parasol needs one endpoint, ``/v1/completions`` with ``logprobs`` and ``logit_bias``, and
must tell a server that is down (retry later) from one that refuses the request (a
setting to change); the ``openai`` client's own retries and error types would hide that.
"""

import json
import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import urlsplit

from scoring.metrics.base import MetricUnavailable
from scoring.metrics.loading import EMBEDDED

# httpx logs every request's URL at INFO: a backend's URL stays out of the workers' logs.
logging.getLogger("httpx").setLevel(logging.WARNING)

IN_PROCESS = "in-process"  # the built-in backend: transformers in the worker, today's default
TRANSFORMERS = "transformers"
SERVER = "openai-compatible"
KINDS = (TRANSFORMERS, SERVER)


class BackendUnavailable(RuntimeError):
    """A server backend did not answer (down, overloaded, timed out): the work can succeed later."""

    def __init__(self, message, backend_name):
        super().__init__(message)
        self.backend_name = backend_name


@dataclass(frozen=True)
class Backend:
    """One configured backend; hashable, so scorers are cached per backend."""

    name: str
    kind: str = TRANSFORMERS
    # transformers: a model for the loader (empty: the metric's own setting, e.g. PARAPLUIE_MODEL);
    # server: the served model's name.
    model: str = ""
    # Server backends only.
    base_url: str = ""
    api_key_env: str = ""  # the NAME of the variable holding the key; empty: no key
    revision: str = "unstated"  # what the operator states the served weights are (a hash, a hub revision)
    tokenizer: str = EMBEDDED  # a local tokenizer of the served model, to render chat prompts (ParaPLUIE)
    timeout: float = 60.0
    max_concurrency: int = 4
    retries: int = 2
    backoff: float = 1.0  # seconds before the first retry, doubled each time
    top_logprobs: int = 5  # asked for first
    # The most top log-probabilities the server returns in one answer; above top_logprobs, an answer token
    # missing from the first answer is looked for in that many (llama-cpp-python's server: any number, so
    # one at least the vocabulary's size asks for every token's; vLLM: its --max-logprobs).
    max_logprobs: int = 5
    logit_bias: bool = True  # the server honours logit_bias (token ids as keys)

    @property
    def is_server(self):
        return self.kind == SERVER

    def signature_fields(self):
        """What identifies scores made through this backend: kind, model, revision (never the URL or key)."""
        return {"backend": self.kind, "model": self.model, "rev": self.revision}


DEFAULT_BACKENDS = {IN_PROCESS: Backend(IN_PROCESS)}

_FIELDS = {
    TRANSFORMERS: {"kind", "model"},
    SERVER: {
        "kind",
        "model",
        "base_url",
        "api_key_env",
        "revision",
        "tokenizer",
        "timeout",
        "max_concurrency",
        "retries",
        "backoff",
        "top_logprobs",
        "max_logprobs",
        "logit_bias",
    },
}
_NUMBERS = {"timeout": (float, 0.1), "backoff": (float, 0.0)}
_COUNTS = {"max_concurrency": 1, "retries": 0, "top_logprobs": 1, "max_logprobs": 1}


def parse_backends(raw, variable="PARASOL_LLM_BACKENDS"):
    """{name: Backend} from a JSON object of objects; ValueError naming ``variable`` and the backend."""
    backends = dict(DEFAULT_BACKENDS)
    if not raw or not raw.strip():
        return backends
    try:
        declared = json.loads(raw)
    except json.JSONDecodeError as error:
        raise ValueError(f"{variable} is not valid JSON: {error}") from None
    if not isinstance(declared, dict):
        raise ValueError(f"{variable} must be a JSON object of backend names to settings")
    for name, options in declared.items():
        if name in DEFAULT_BACKENDS:
            raise ValueError(f"{variable} redefines the built-in backend {name!r}: give yours another name")
        backends[name] = _parse_backend(name, options, f"{variable}[{name!r}]")
    return backends


def _parse_backend(name, options, where):
    if not name or not isinstance(options, dict):
        raise ValueError(f"{where} must be an object with a non-empty name")
    kind = options.get("kind", SERVER)
    if kind not in KINDS:
        raise ValueError(f"{where}: kind must be one of {', '.join(KINDS)}, got {kind!r}")
    unknown = sorted(set(options) - _FIELDS[kind])
    if unknown:
        raise ValueError(f"{where}: unknown setting(s) {', '.join(unknown)} for kind {kind}")
    values = {"name": name, **options, "kind": kind}
    for key, (cast, minimum) in _NUMBERS.items():
        if key in values:
            values[key] = _number(values[key], cast, minimum, f"{where}.{key}")
    for key, minimum in _COUNTS.items():
        if key in values:
            values[key] = _number(values[key], int, minimum, f"{where}.{key}")
    if kind == TRANSFORMERS and not values.get("model"):
        raise ValueError(f"{where}.model must name a local model (a path, a .gguf file, a cached hub name)")
    for key in ("model", "base_url", "api_key_env", "revision", "tokenizer"):
        if key in values and not isinstance(values[key], str):
            raise ValueError(f"{where}.{key} must be a string")
    if "logit_bias" in values and not isinstance(values["logit_bias"], bool):
        raise ValueError(f"{where}.logit_bias must be true or false")
    if kind == SERVER:
        _check_server(values, where)
    return Backend(**values)


def _number(value, cast, minimum, where):
    if isinstance(value, bool) or not isinstance(value, int | float) or cast(value) != value or value < minimum:
        raise ValueError(f"{where} must be a{'n integer' if cast is int else ' number'} of at least {minimum}")
    return cast(value)


def _check_server(values, where):
    url = urlsplit(values.get("base_url", ""))
    if url.scheme not in {"http", "https"} or not url.hostname:
        raise ValueError(f"{where}.base_url must be an http(s) URL such as http://127.0.0.1:8000/v1")
    if not values.get("model"):
        raise ValueError(f"{where}.model must name the model the server serves")
    if not values.get("tokenizer", EMBEDDED):
        raise ValueError(f"{where}.tokenizer must name a local tokenizer of the served model")


# Talking to a server.


class ServerClient:
    """Requests to one server backend: pooled connections, bounded concurrency, retries with backoff."""

    def __init__(self, backend: Backend):
        import httpx

        self.backend = backend
        limits = httpx.Limits(max_connections=backend.max_concurrency)
        self._http = httpx.Client(base_url=backend.base_url.rstrip("/") + "/", timeout=backend.timeout, limits=limits)
        self._errors = (httpx.TransportError, httpx.TimeoutException)

    def _headers(self):
        if not self.backend.api_key_env:
            return {}
        key = os.environ.get(self.backend.api_key_env, "")
        if not key:
            raise MetricUnavailable(
                f"backend {self.backend.name!r} reads its API key from {self.backend.api_key_env}, which is not set"
            )
        return {"Authorization": f"Bearer {key}"}

    def completion(self, prompt, **options):
        """One ``/completions`` call's first choice; BackendUnavailable once the retries are spent."""
        body = {"model": self.backend.model, "prompt": prompt, **options}
        delay = self.backend.backoff
        for attempt in range(self.backend.retries + 1):
            try:
                response = self._http.post("completions", json=body, headers=self._headers())
            except self._errors as error:
                problem = f"{error.__class__.__name__}"
            else:
                if response.status_code == 200:
                    return response.json()["choices"][0]
                if response.status_code not in {408, 429} and response.status_code < 500:
                    raise MetricUnavailable(
                        f"backend {self.backend.name!r} refused the request (HTTP {response.status_code}): "
                        f"{response.text[:300]}"
                    )
                problem = f"HTTP {response.status_code}"
            if attempt < self.backend.retries:
                time.sleep(delay)
                delay *= 2
        message = f"LLM backend {self.backend.name!r} is unreachable ({problem})"
        raise BackendUnavailable(message, self.backend.name)

    def map(self, function, items):
        """``function`` over ``items`` with up to ``max_concurrency`` requests in flight, results in order."""
        items = list(items)
        if len(items) <= 1 or self.backend.max_concurrency == 1:
            return [function(item) for item in items]
        with ThreadPoolExecutor(max_workers=min(self.backend.max_concurrency, len(items))) as pool:
            return list(pool.map(function, items))

    def close(self):
        self._http.close()

"""Named LLM backends: the in-process transformers model, or an OpenAI-compatible server.

A deployment declares its backends by name (PARASOL_LLM_BACKENDS, parsed here so the
metrics stay usable without Django); a campaign names one. A server backend holds its
base URL and the *name* of the environment variable with its API key, never the key:
the key is read when a request is sent, so it is in no object, signature or log.

The client is httpx (sync, pooled) rather than the ``openai`` package: Parasol needs one
endpoint, ``/v1/completions`` with ``logprobs`` and ``logit_bias``, and must tell a server
that is down (retry later) from one that refuses a request (that pair fails, with the
server's message); the ``openai`` client's own retries and error types would hide that.

Every request is bounded (STYLE.md, 17; docs/operations/llm-servers.md): a wall-clock deadline
for the whole request, body included (httpx's own timeout bounds each socket read, so a server
dripping a byte a second would hold it for ever), a byte cap on the answer, strict JSON, finite
log-probabilities, clean text. ``ServerClient`` is the one way out to a server.
"""

import json
import logging
import os
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as Late
from dataclasses import dataclass
from urllib.parse import urlsplit

from metrics.base import MetricUnavailable, PairFailed
from metrics.loading import EMBEDDED
from metrics.untrusted import UntrustedAnswer, clean_text, finite, parse_json, shown

# httpx logs every request's URL at INFO: a backend's URL stays out of the workers' logs.
logging.getLogger("httpx").setLevel(logging.WARNING)

IN_PROCESS = "in-process"  # the built-in backend: transformers in the worker, today's default
TRANSFORMERS = "transformers"
SERVER = "openai-compatible"
KINDS = (TRANSFORMERS, SERVER)
# The deployment's caps on what one answer may hold (PARASOL_LLM_MAX_ANSWER_BYTES and
# PARASOL_LLM_MAX_TEXT_CHARS, read in parasol/settings.py and handed to parse_backends).
# 8 MiB holds a top-log-probabilities answer over a 150,000-token vocabulary (about 5 MB).
MAX_ANSWER_BYTES = 8 * 1024 * 1024
MAX_TEXT_CHARS = 20_000


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
    # Deployment-wide, not per backend: the caps on one answer (bytes on the wire, characters of its text).
    max_answer_bytes: int = MAX_ANSWER_BYTES
    max_text_chars: int = MAX_TEXT_CHARS

    @property
    def is_server(self):
        return self.kind == SERVER

    @property
    def request_deadline_seconds(self):
        """The longest one HTTP request to this backend can take, answer included: ``timeout``, as a wall clock."""
        return self.timeout

    @property
    def completion_deadline_seconds(self):
        """The longest one ``ServerClient.completion`` can take: every try at its deadline, and the backoffs."""
        backoffs = sum(self.backoff * 2**attempt for attempt in range(self.retries))
        return (self.retries + 1) * self.request_deadline_seconds + backoffs

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


def parse_backends(raw, variable="PARASOL_LLM_BACKENDS", **caps):
    """{name: Backend} from a JSON object of objects; ValueError naming ``variable`` and the backend.

    ``caps``: ``max_answer_bytes`` and ``max_text_chars``, the deployment's, given to every server backend."""
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
        backends[name] = _parse_backend(name, options, f"{variable}[{name!r}]", caps)
    return backends


def _parse_backend(name, options, where, caps):
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
        values.update(caps)
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

# The deadline of the request the current thread is sending (time.monotonic()), or None.
_deadline = threading.local()


def _left(timeout):
    """A socket operation's timeout, cut to what is left of the current request's deadline."""
    ends = getattr(_deadline, "at", None)
    if ends is None:
        return timeout
    left = max(ends - time.monotonic(), 0.001)  # past it: the next read times out at once
    return left if timeout is None else min(timeout, left)


def _deadline_transport(max_connections):
    """An httpx transport whose every connect, read and write waits at most until the request's deadline.

    httpx's timeouts are per operation: a server that answers 200 and then drips one byte
    every second never trips a read timeout. Each socket operation of a request made here
    is given what is left of the request's own wall clock instead (httpcore's documented
    network-backend interface), so the whole request ends by its deadline.
    """
    import httpcore
    import httpx

    class Stream(httpcore.NetworkStream):
        def __init__(self, stream):
            self._stream = stream

        def read(self, max_bytes, timeout=None):
            return self._stream.read(max_bytes, _left(timeout))

        def write(self, buffer, timeout=None):
            return self._stream.write(buffer, _left(timeout))

        def close(self):
            return self._stream.close()

        def start_tls(self, ssl_context, server_hostname=None, timeout=None):
            return Stream(self._stream.start_tls(ssl_context, server_hostname, _left(timeout)))

        def get_extra_info(self, info):
            return self._stream.get_extra_info(info)

    class Backend(httpcore.SyncBackend):
        def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
            # The name is looked up within the deadline too (a resolver can hang for its own tens of seconds),
            # then each address it gives is tried with what is left, as socket.create_connection would.
            addresses, error = _resolve(host, port, _left(timeout)), None
            for address in addresses:
                try:
                    stream = super().connect_tcp(address, port, _left(timeout), local_address, socket_options)
                except httpcore.ConnectError as failed:
                    error = failed
                    continue
                return Stream(stream)
            raise error or httpcore.ConnectError(f"{host!r} resolves to no address")

    transport = httpx.HTTPTransport()
    # The one private name used: httpx builds its pool without a way to pass a network backend.
    transport._pool = httpcore.ConnectionPool(
        ssl_context=httpx.create_ssl_context(),
        max_connections=max_connections,
        max_keepalive_connections=max_connections,
        keepalive_expiry=5.0,  # httpx's default
        network_backend=Backend(),
    )
    return transport


# Name lookups run here so that a request waits for one only until its deadline. A lookup past it is left to end
# on its own (a thread cannot be stopped): a few threads at most, shared by every backend of the process.
_RESOLVER = ThreadPoolExecutor(max_workers=4, thread_name_prefix="llm-resolve")


def _resolve(host, port, timeout):
    """The IP addresses of `host`, looked up within `timeout` seconds (httpcore.ConnectTimeout past it)."""
    import httpcore

    try:
        socket.inet_pton(socket.AF_INET6 if ":" in host else socket.AF_INET, host)
        return [host]  # already an address: nothing to look up
    except OSError:
        pass
    lookup = _RESOLVER.submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
    try:
        found = lookup.result(timeout=timeout)
    except Late:
        raise httpcore.ConnectTimeout(f"looking up {host!r} took over the request's deadline") from None
    except OSError as error:
        raise httpcore.ConnectError(f"cannot look up {host!r}: {error}") from None
    return list(dict.fromkeys(info[4][0] for info in found))


class _TryAgain(Exception):
    """This try got no usable answer from a server that may answer later (down, overloaded, too slow)."""


class ServerClient:
    """Requests to one server backend: pooled connections, bounded concurrency, retries with backoff,
    each request bounded in time and size and its answer checked (`completion`)."""

    def __init__(self, backend: Backend):
        import httpx

        self.backend = backend
        self._httpx = httpx
        # No proxy from the environment: it would carry the request past the deadline transport.
        self._http = httpx.Client(
            base_url=backend.base_url.rstrip("/") + "/",
            transport=_deadline_transport(backend.max_concurrency),
            trust_env=False,
        )
        self._errors = (httpx.TransportError, httpx.TimeoutException)

    def _headers(self):
        # identity: a compressed answer could inflate past the byte cap before it is counted.
        headers = {"Accept-Encoding": "identity"}
        if not self.backend.api_key_env:
            return headers
        key = os.environ.get(self.backend.api_key_env, "")
        if not key:
            raise MetricUnavailable(
                f"backend {self.backend.name!r} reads its API key from {self.backend.api_key_env}, which is not set"
            )
        return {**headers, "Authorization": f"Bearer {key}"}

    def completion(self, prompt, **options):
        """One ``/completions`` call's first choice, checked (`checked_choice`).

        BackendUnavailable once the retries are spent on a server that did not answer in time
        (down, 408/429/5xx, past its deadline); PairFailed for a refusal (another 4xx, a redirect)
        or an answer that cannot be used (over the byte cap, malformed, non-finite): that request
        fails, not the batch.
        """
        body = {"model": self.backend.model, "prompt": prompt, **options}
        delay = self.backend.backoff
        for attempt in range(self.backend.retries + 1):
            try:
                return self._post(body)
            except _TryAgain as error:
                problem = str(error)
            if attempt < self.backend.retries:
                time.sleep(delay)
                delay *= 2
        message = f"LLM backend {self.backend.name!r} is unreachable ({problem})"
        raise BackendUnavailable(message, self.backend.name)

    def _post(self, body):
        """One request, ended by its deadline, its answer read up to the byte cap."""
        headers = self._headers()
        limit = self.backend.max_answer_bytes
        _deadline.at = time.monotonic() + self.backend.request_deadline_seconds
        try:
            timeout = self._httpx.Timeout(self.backend.request_deadline_seconds)
            with self._http.stream("POST", "completions", json=body, headers=headers, timeout=timeout) as response:
                # A refusal's or an error's message is shown cut: its first 64 KiB are plenty.
                raw = self._read(response, limit if response.status_code == 200 else 65536)
        except self._errors as error:
            raise _TryAgain(f"{error.__class__.__name__}") from None
        finally:
            _deadline.at = None
        if response.status_code in {408, 429} or response.status_code >= 500:
            raise _TryAgain(f"HTTP {response.status_code}")
        if response.status_code != 200:
            message = raw.decode("utf-8", errors="replace") if raw is not None else "(an answer over the byte cap)"
            raise PairFailed(
                f"backend {self.backend.name!r} refused the request (HTTP {response.status_code}): {shown(message)}"
            )
        if raw is None:
            raise PairFailed(
                f"backend {self.backend.name!r} answered over {limit:,} bytes (PARASOL_LLM_MAX_ANSWER_BYTES)"
            )
        try:
            return checked_choice(parse_json(raw), self.backend.max_text_chars)
        except UntrustedAnswer as error:
            raise PairFailed(f"backend {self.backend.name!r} gave an answer that cannot be used: {error}") from None

    def _read(self, response, limit):
        """The answer's bytes, or None past ``limit`` (read no further); _TryAgain past the deadline."""
        if response.headers.get("Content-Encoding", "identity").lower() not in {"identity", ""}:
            raise PairFailed(f"backend {self.backend.name!r} compressed its answer though asked not to")
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > limit:
            return None
        chunks, size = [], 0
        for chunk in response.iter_raw():
            size += len(chunk)
            if size > limit:
                return None
            chunks.append(chunk)
            if time.monotonic() > _deadline.at:
                raise _TryAgain(f"its answer took over {self.backend.request_deadline_seconds:g} s")
        return b"".join(chunks)

    def map(self, function, items, each_alone=False):
        """``function`` over ``items`` with up to ``max_concurrency`` requests in flight, results in order.

        ``each_alone``: an item whose call raises PairFailed gets the error as its result, the others theirs."""
        items = list(items)
        if each_alone:
            function = catching_pair_failures(function)
        if len(items) <= 1 or self.backend.max_concurrency == 1:
            return [function(item) for item in items]
        with ThreadPoolExecutor(max_workers=min(self.backend.max_concurrency, len(items))) as pool:
            return list(pool.map(function, items))

    def close(self):
        self._http.close()


def catching_pair_failures(function):
    """`function` returning the PairFailed it raises instead of raising it: one item fails alone."""

    def call(item):
        try:
            return function(item)
        except PairFailed as error:
            return error

    return call


# A log-probability is at most 0; this much above is a server's rounding, not a probability over 1.
_LOGPROB_SLACK = 1e-4
# Below this a probability is 0 for any use (e^-10000); a finite -1e300 would otherwise make a
# finite but absurd log-odds. vLLM writes -9999.0 for a token it masks.
LOGPROB_FLOOR = -1e4


def checked_choice(answer, max_text_chars):
    """The first choice of a ``/completions`` answer, or UntrustedAnswer: its text cleaned and cut, its
    top log-probabilities finite and at most 0 (a probability), its finish reason a short string."""
    try:
        choice = answer["choices"][0]
    except (KeyError, IndexError, TypeError):
        raise UntrustedAnswer("the answer has no choices") from None
    if not isinstance(choice, dict):
        raise UntrustedAnswer("its first choice is not an object")
    checked = {"text": clean_text(choice.get("text", ""), max_text_chars)}
    if isinstance(choice.get("finish_reason"), str):
        checked["finish_reason"] = clean_text(choice["finish_reason"], 40)
    logprobs = choice.get("logprobs")
    if isinstance(logprobs, dict) and "top_logprobs" in logprobs:
        positions = logprobs["top_logprobs"]
        if not isinstance(positions, list):
            raise UntrustedAnswer("its top_logprobs is not a list")
        checked["logprobs"] = {"top_logprobs": [_checked_position(position) for position in positions]}
    return checked


def _checked_position(position):
    if position is None:
        return {}
    if not isinstance(position, dict):
        raise UntrustedAnswer("a position of its top_logprobs is not an object")
    checked = {}
    for token, value in position.items():
        value = finite(value, "a log-probability")
        if value > _LOGPROB_SLACK:
            raise UntrustedAnswer(f"a log-probability is above 0 ({value:g})")
        checked[token] = min(max(value, LOGPROB_FLOOR), 0.0)
    return checked

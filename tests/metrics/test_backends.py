"""Named LLM backends: what PARASOL_LLM_BACKENDS accepts, what it refuses, and what a backend publishes."""

import json

import pytest

from metrics.backends import IN_PROCESS, SERVER, TRANSFORMERS, BackendUnavailable, ServerClient, parse_backends
from tests.servers import free_port

LAB = {"base_url": "http://10.0.0.5:8000/v1", "model": "mistral-7b", "api_key_env": "LAB_KEY", "revision": "abc"}


def test_it_always_has_the_in_process_backend():
    assert list(parse_backends("")) == [IN_PROCESS]
    assert parse_backends("")[IN_PROCESS].kind == TRANSFORMERS


def test_it_reads_a_server_backend_with_its_settings():
    backend = parse_backends(json.dumps({"lab": {**LAB, "timeout": 5, "max_concurrency": 16, "retries": 3}}))["lab"]
    assert (backend.kind, backend.model, backend.api_key_env) == (SERVER, "mistral-7b", "LAB_KEY")
    assert (backend.timeout, backend.max_concurrency, backend.retries) == (5.0, 16, 3)
    assert (backend.top_logprobs, backend.max_logprobs) == (5, 5)  # no wider ask unless declared


@pytest.mark.parametrize(
    "declared, message",
    [
        ("not json", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        (json.dumps({"lab": {**LAB, "base_url": "file:///etc/passwd"}}), "base_url must be an http(s) URL"),
        (json.dumps({"lab": {**LAB, "model": ""}}), "model must name"),
        (json.dumps({"lab": {**LAB, "api_key": "sk-secret"}}), "unknown setting(s) api_key"),
        (json.dumps({"lab": {**LAB, "retries": -1}}), "retries must be an integer of at least 0"),
        (json.dumps({"lab": {**LAB, "max_concurrency": 1.5}}), "max_concurrency must be an integer"),
        (json.dumps({"lab": {**LAB, "logit_bias": "yes"}}), "logit_bias must be true or false"),
        (json.dumps({"lab": {**LAB, "max_logprobs": 0}}), "max_logprobs must be an integer of at least 1"),
        (json.dumps({"lab": {**LAB, "kind": "grpc"}}), "kind must be one of"),
        (json.dumps({"local": {"kind": "transformers"}}), "model must name a local model"),
        (json.dumps({IN_PROCESS: {"kind": "transformers", "model": "/m"}}), "redefines the built-in backend"),
    ],
)
def test_it_refuses_a_bad_declaration_naming_the_variable_and_the_backend(declared, message):
    with pytest.raises(ValueError, match="PARASOL_LLM_BACKENDS") as error:
        parse_backends(declared)
    assert message in str(error.value)


def test_its_signature_names_kind_model_and_revision_but_never_the_url_or_the_key_variable():
    fields = parse_backends(json.dumps({"lab": LAB}))["lab"].signature_fields()
    assert fields == {"backend": SERVER, "model": "mistral-7b", "rev": "abc"}
    assert "10.0.0.5" not in repr(fields) and "LAB_KEY" not in repr(fields)


def test_a_server_that_is_not_there_is_unavailable_for_now_after_its_retries():
    declared = {"base_url": f"http://127.0.0.1:{free_port()}/v1", "model": "m", "retries": 2, "backoff": 0}
    backend = parse_backends(json.dumps({"gone": declared}))["gone"]
    with pytest.raises(BackendUnavailable, match="'gone' is unreachable"):
        ServerClient(backend).completion("Hello", max_tokens=1)


def test_a_name_lookup_that_hangs_ends_with_its_request(monkeypatch):
    """A resolver that never answers (a lab's DNS down): the request ends by its own deadline, unavailable, while
    the lookup is still held (it is left to end on its own thread)."""
    import socket
    import threading

    held, release = threading.Event(), threading.Event()
    real = socket.getaddrinfo

    def hanging(host, *args, **kwargs):
        if host != "llm.lab.invalid":
            return real(host, *args, **kwargs)
        held.set()
        release.wait()
        raise socket.gaierror("released by the test")

    monkeypatch.setattr(socket, "getaddrinfo", hanging)
    declared = {"base_url": "http://llm.lab.invalid:8000/v1", "model": "m", "retries": 0, "timeout": 0.5}
    backend = parse_backends(json.dumps({"lab": declared}))["lab"]
    raised = []

    def ask():
        try:
            ServerClient(backend).completion("Hello", max_tokens=1)
        except BackendUnavailable as error:
            raised.append(error)

    asking = threading.Thread(target=ask, daemon=True)
    try:
        asking.start()
        asking.join(timeout=120)  # a bound on a regression (it would wait for the lookup for ever), not a wait
        assert not asking.is_alive() and held.is_set(), "the request waited for the hanging lookup"
        assert "'lab' is unreachable" in str(raised[0])  # it ended while the lookup still hung
    finally:
        release.set()

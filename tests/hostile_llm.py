"""A hostile OpenAI-compatible server (stdlib, threaded, on 127.0.0.1): what a broken or malicious LLM server
can send, one mode at a time, for the tests of the bounded client (metrics/backends.py).

Modes: ok, drip (200, then one byte every `drip_seconds`), hang (never answers), 500, 429, malformed (cut JSON),
nan / inf / -inf (JSON's forbidden constants as log-probabilities), huge (1e999), positive (a log-probability
of 1e300), missing (Yes/No absent from the top log-probabilities), nul (NUL and lone surrogates in the text),
big (10 MB, no Content-Length), redirect (302), refuse (400 with markup in its message).
`per_marker` picks a mode for the prompts holding a marker: one bad pair among good ones.
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODES = (
    "ok",
    "drip",
    "hang",
    "500",
    "429",
    "malformed",
    "nan",
    "inf",
    "-inf",
    "huge",
    "positive",
    "missing",
    "nul",
    "big",
    "redirect",
    "refuse",
)
# Every spelling of the answers a tokenizer may use: ParaPLUIE finds its own pieces among them.
ANSWERS = {"Yes": -0.2, " Yes": -0.3, "yes": -2.5, " yes": -2.6, "No": -1.9, " No": -2.0, "no": -3.1, " no": -3.2}
REFUSAL = "<script>alert('x')</script> This model's maximum context length is 2048 tokens"
BIG_BYTES = 10 * 1024 * 1024


def answer(text=" Yes", top=None):
    return {"choices": [{"text": text, "finish_reason": "stop", "logprobs": {"top_logprobs": [top or ANSWERS]}}]}


class HostileLLM:
    """The server; `mode` (and `per_marker`) may be changed while it runs; `requests` counts what it got."""

    def __init__(self, mode="ok", drip_seconds=0.5, per_marker=None):
        self.mode, self.drip_seconds, self.per_marker = mode, drip_seconds, dict(per_marker or {})
        self.requests = 0
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self._closing.set()  # hanging and dripping answers end
        self._server.shutdown()
        self._server.server_close()

    def mode_for(self, prompt):
        for marker, mode in self.per_marker.items():
            if marker in prompt:
                return mode
        return self.mode

    def _handler(self):
        hostile = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with hostile._lock:
                    hostile.requests += 1
                mode = hostile.mode_for(str(request.get("prompt", "")))
                try:
                    getattr(self, f"answer_{mode.replace('-', 'minus_')}")()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up: what the test wants

            def send(self, status, body, content_type="application/json", length=True, headers=()):
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                for name, value in headers:
                    self.send_header(name, value)
                if length:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def send_json(self, value):
                self.send(200, json.dumps(value).encode())

            def answer_ok(self):
                self.send_json(answer())

            def answer_drip(self):
                body = json.dumps(answer()).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                for byte in body:
                    if hostile._closing.wait(hostile.drip_seconds):
                        return
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()

            def answer_hang(self):
                hostile._closing.wait(600)

            def answer_500(self):
                self.send(500, b'{"error": "internal"}')

            def answer_429(self):
                self.send(429, b'{"error": "slow down"}')

            def answer_malformed(self):
                self.send(200, b'{"choices": [{"text": " Yes", "logprobs": {"top_logprobs": [{"Yes": -0.')

            def answer_nan(self):
                self.send_json(answer(top={**ANSWERS, "Yes": float("nan"), " Yes": float("nan")}))

            def answer_inf(self):
                self.send_json(answer(top={**ANSWERS, "Yes": float("inf"), " Yes": float("inf")}))

            def answer_minus_inf(self):
                top = {key: float("-inf") for key in ANSWERS}
                self.send_json(answer(top=top))

            def answer_huge(self):
                body = json.dumps(answer(top={**ANSWERS, "Yes": 12345.0, " Yes": 12345.0}))
                self.send(200, body.replace("12345.0", "1e999").encode())

            def answer_positive(self):
                self.send_json(answer(top={**ANSWERS, "Yes": 1e300, " Yes": 1e300}))

            def answer_missing(self):
                self.send_json(answer(text=" Maybe", top={" Maybe": -0.1, "Perhaps": -1.5, " the": -4.0}))

            def answer_nul(self):
                self.send_json(answer(text=" Yes\x00 it\ud800 is\x1b[31m\udfff same"))

            def answer_big(self):
                # No Content-Length: the client can only count what comes, as a close-delimited body.
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"choices": [{"text": "')
                chunk = b"x" * 65536
                for _ in range(BIG_BYTES // len(chunk)):
                    self.wfile.write(chunk)
                self.wfile.write(b'"}]}')
                self.close_connection = True

            def answer_redirect(self):
                self.send(302, b"", headers=[("Location", "http://127.0.0.1:9/v1/completions")])

            def answer_refuse(self):
                self.send(400, json.dumps({"error": {"message": REFUSAL}}).encode())

            def log_message(self, *args):
                pass

        return Handler

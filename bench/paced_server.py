"""A stand-in for a server with continuous batching: an OpenAI-compatible `/v1/completions` (stdlib) that serves
up to `capacity` requests at once, each in a fixed `latency`, and queues the rest, as vLLM does when its batch is
full. It counts what it served and the most requests it had in flight, so a test or a bench can tell how well a
client fed it: `capacity / latency` requests per second is all it allows.

    with PacedServer(capacity=64, latency=0.5, top_logprobs={" Yes": -0.1, " No": -2.3}) as server:
        ... server.url, server.served, server.peak ...
"""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class PacedServer:
    def __init__(self, capacity=64, latency=0.5, top_logprobs=None, text=" Yes"):
        self.capacity, self.latency = capacity, latency
        self.top_logprobs = dict(top_logprobs or {" Yes": -0.1, " No": -2.3})
        self.text = text
        self.served = self.in_flight = self.peak = 0
        self._slots = threading.BoundedSemaphore(capacity)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._server.request_queue_size = 1024  # a client opening hundreds of connections at once is not refused
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self):
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()

    def reset(self):
        with self._lock:
            self.served = self.peak = 0

    def allowed_per_second(self):
        """The most requests per second it serves: `capacity` every `latency` seconds."""
        return self.capacity / self.latency

    def _serve(self):
        """Hold one of the slots for `latency` seconds (waiting for one if all are taken); count it."""
        with self._slots:
            with self._lock:
                self.in_flight += 1
                self.peak = max(self.peak, self.in_flight)
            time.sleep(self.latency)
            with self._lock:
                self.in_flight -= 1
                self.served += 1

    def _answer(self, body):
        logprobs = {"top_logprobs": [self.top_logprobs], "tokens": [self.text]}
        choice = {"text": self.text, "index": 0, "logprobs": logprobs, "finish_reason": "stop"}
        return {"id": "paced", "object": "text_completion", "model": body.get("model", ""), "choices": [choice]}

    def _handler(self):
        paced = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive: a pooled client reuses its connections

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                paced._serve()
                answer = json.dumps(paced._answer(body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        return Handler


def parapluie_logprobs(metric="parapluie_direct", yes=-0.4, no=-1.6):
    """Top log-probabilities that hold the (embedded) tokenizer's Yes and No pieces, as ParaPLUIE reads them
    through a server: the answer a `PacedServer` gives so that every pair is scored with one request."""
    from metrics import get_metric
    from metrics.backends import parse_backends

    declared = {"base_url": "http://127.0.0.1:1/v1", "model": "smollm2"}
    scorer = get_metric(metric, backend=parse_backends(json.dumps({"paced": declared}))["paced"])
    return {**{piece: yes for piece in scorer.yes_pieces}, **{piece: no for piece in scorer.no_pieces}}

"""A real OpenAI-compatible HTTP server on 127.0.0.1 (stdlib ``ThreadingHTTPServer``) for the LLM tests.

``/v1/chat/completions`` answers with ``responder(body) -> content`` unless a fault is queued in ``faults``:
``("status", code, headers)``, ``("sleep", seconds)`` (then answers normally), ``("garbage",)`` (a non-JSON
HTTP body). Every request body and header set is recorded in ``requests``; ``max_inflight`` is the most
answers computed at once."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeOpenAI:
    def __init__(self, responder):
        self.responder = responder
        self.faults: list[tuple] = []
        self.requests: list[dict] = []
        self.inflight = self.max_inflight = 0
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with outer._lock:
                    outer.requests.append({"path": self.path, "body": body, "headers": dict(self.headers)})
                    fault = outer.faults.pop(0) if outer.faults else None
                if fault and fault[0] == "status":
                    self._send(fault[1], json.dumps({"error": {"message": "injected", "type": "x"}}).encode(),
                               fault[2] if len(fault) > 2 else {})
                    return
                if fault and fault[0] == "sleep":
                    time.sleep(fault[1])
                if fault and fault[0] == "garbage":
                    self._send(200, b"{not json", {})
                    return
                with outer._lock:
                    outer.inflight += 1
                    outer.max_inflight = max(outer.max_inflight, outer.inflight)
                try:
                    content = outer.responder(body)
                finally:
                    with outer._lock:
                        outer.inflight -= 1
                reply = {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body.get("model"),
                         "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                      "finish_reason": "stop"}],
                         "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}
                self._send(200, json.dumps(reply).encode(), {})

            def _send(self, code, data, headers):
                try:
                    self.send_response(code)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    def chat_requests(self) -> list[dict]:
        return [r for r in self.requests if r["path"].endswith("/chat/completions")]

"""A stand-in Ollama server on 127.0.0.1 for tests: speaks the real HTTP API (/api/tags,
/api/chat with NDJSON streaming, /api/pull) so the production ChatOllama and ollama
clients are exercised end to end, with scripted replies and recorded requests."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeOllama:
    def __init__(self, models: list[str], replies: list[str]) -> None:
        self.models = models
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def _json(self, body: Any, status: int = 200) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path == "/api/tags":
                    self._json({"models": [{"name": m, "model": m, "size": 1, "digest": "x"} for m in fake.models]})
                else:
                    self._json({"error": "not found"}, 404)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                fake.requests.append({"path": self.path, **body})
                if self.path == "/api/chat":
                    self._chat(body)
                elif self.path == "/api/pull":
                    self._ndjson(
                        [
                            {"status": "pulling manifest"},
                            {"status": "downloading", "completed": 5, "total": 10},
                            {"status": "success"},
                        ]
                    )
                else:
                    self._json({"error": "not found"}, 404)

            def _chat(self, body: dict) -> None:
                if body.get("model") not in fake.models:
                    self._json({"error": f"model '{body.get('model')}' not found"}, 404)
                    return
                reply = fake.replies.pop(0) if fake.replies else ""
                words = reply.split(" ")
                parts = [
                    {
                        "model": body["model"],
                        "message": {"role": "assistant", "content": w + (" " if i < len(words) - 1 else "")},
                        "done": False,
                    }
                    for i, w in enumerate(words)
                ]
                final = {
                    "model": body["model"],
                    "message": {"role": "assistant", "content": ""},
                    "done": True,
                    "done_reason": "stop",
                    "prompt_eval_count": 321,
                    "eval_count": len(words),
                }
                if body.get("stream", True):
                    self._ndjson(parts + [final])
                else:
                    final["message"]["content"] = reply
                    self._json(final)

            def _ndjson(self, items: list[dict]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/x-ndjson")
                self.end_headers()
                for item in items:
                    self.wfile.write((json.dumps(item) + "\n").encode())
                    self.wfile.flush()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> "FakeOllama":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()

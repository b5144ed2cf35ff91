"""An in-process fake Ollama on 127.0.0.1 (a thread): /api/chat answers from a queue, /api/ps lists loaded models."""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class FakeOllama:
    def __init__(self, model: str = "worker-v1:latest") -> None:
        self.model = model
        self.replies: list[str] = []
        self.loaded: list[str] = []
        self.loaded_flag: Path | None = None  # when set, the model counts as loaded once this file exists
        self.hits: Counter[str] = Counter()
        self.chat_bodies: list[dict[str, Any]] = []
        self.pace = 0.0  # > 0: a reply streams word by word, this many seconds apart (a slow local model)
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, obj: Any, ctype: str = "application/json") -> None:
                data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                owner.hits[self.path] += 1
                if self.path == "/api/version":
                    self._send({"version": "0.0-fake"})
                elif self.path == "/api/tags":
                    self._send({"models": [{"name": owner.model}]})
                elif self.path == "/api/ps":
                    names = list(owner.loaded)
                    if owner.loaded_flag is not None and owner.loaded_flag.exists():
                        names.append(owner.model)
                    self._send({"models": [{"name": n} for n in names]})
                else:
                    self.send_error(404)

            def do_POST(self) -> None:  # noqa: N802
                owner.hits[self.path] += 1
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
                if self.path == "/api/show":
                    self._send({"model_info": {"llama.context_length": 8192}})
                elif self.path == "/api/chat":
                    owner.chat_bodies.append(body)
                    text = owner.replies.pop(0) if owner.replies else "{}"
                    pieces = re.findall(r"\S*\s*", text)[:-1] if owner.pace else [text]
                    lines = [{"message": {"role": "assistant", "content": p}, "done": False} for p in pieces]
                    lines.append({"message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop",
                                  "prompt_eval_count": 3, "eval_count": max(2, len(pieces))})
                    if not owner.pace:
                        self._send("".join(json.dumps(x) + "\n" for x in lines).encode(), "application/x-ndjson")
                        return
                    data = [(json.dumps(x) + "\n").encode() for x in lines]
                    self.send_response(200)
                    self.send_header("Content-Type", "application/x-ndjson")
                    self.send_header("Content-Length", str(sum(len(d) for d in data)))
                    self.end_headers()
                    for piece in data:  # word by word, as a slow model writes
                        self.wfile.write(piece)
                        self.wfile.flush()
                        time.sleep(owner.pace)
                else:
                    self.send_error(404)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeOllama:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

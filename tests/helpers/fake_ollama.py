"""A stand-alone fake Ollama server (stdlib only), started by the tests' restart command.

Usage: python fake_ollama.py PORT PIDFILE MODEL [CONTEXT_LENGTH]
Answers /api/version, /api/tags, /api/show and /api/chat (one NDJSON answer "restarted ok").
"""

from __future__ import annotations

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, PIDFILE, MODEL = int(sys.argv[1]), sys.argv[2], sys.argv[3]
CONTEXT = int(sys.argv[4]) if len(sys.argv) > 4 else 8192


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def _json(self, obj: object) -> None:
        data = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path == "/api/version":
            self._json({"version": "0.0-fake"})
        elif self.path == "/api/tags":
            self._json({"models": [{"name": MODEL, "model": MODEL}]})
        else:
            self.send_error(404)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        if self.path == "/api/show":
            self._json({"model_info": {"general.architecture": "llama", "llama.context_length": CONTEXT}})
        elif self.path == "/api/chat":
            lines = [
                {"message": {"role": "assistant", "content": "restarted "}, "done": False},
                {"message": {"role": "assistant", "content": f"ok ({body.get('model')})"}, "done": False},
                {"message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop",
                 "prompt_eval_count": 3, "eval_count": 2},
            ]
            data = "".join(json.dumps(x) + "\n" for x in lines).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-ndjson")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        else:
            self.send_error(404)


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
    with open(PIDFILE, "w") as fh:
        fh.write(str(os.getpid()))
    server.serve_forever()

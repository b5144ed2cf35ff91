"""A local OTLP/HTTP receiver on 127.0.0.1 for the trace tests (fixture `otlp_receiver`)."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


@dataclass
class OtlpReceiver:
    url: str
    bodies: list[bytes] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    content_types: list[str] = field(default_factory=list)

    def spans(self) -> list[object]:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        out: list[object] = []
        for body in self.bodies:
            req = ExportTraceServiceRequest()
            req.ParseFromString(body)
            for rs in req.resource_spans:
                for ss in rs.scope_spans:
                    out.extend(ss.spans)
        return out


@pytest.fixture
def otlp_receiver() -> Iterator[OtlpReceiver]:
    received = OtlpReceiver(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            received.paths.append(self.path)
            received.content_types.append(self.headers.get("Content-Type", ""))
            received.bodies.append(body)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    received.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield received
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)

"""A TCP listener on 127.0.0.1 that records whatever reaches it: the box and plain-mode tests say nothing does."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """(port, what arrived): each connection's first bytes (b"(connected)" when it sent none), answered
    with an empty HTTP 200 so that a client that posts does not wait."""
    got: list[bytes] = []
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(5)
    srv.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    got.append(conn.recv(65536) or b"(connected)")
                    conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n")
                except OSError:
                    got.append(b"(connected)")

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1], got
    stop.set()
    t.join(2)
    srv.close()

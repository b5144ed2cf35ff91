"""Real Redis and PostgreSQL servers for tests: private ports, temporary folders, stopped afterwards.

`RedisServer` runs `redis-server` without persistence; `PostgresServer` runs Debian's `initdb`
and `pg_ctl` (as the `postgres` user when the tests run as root: initdb refuses root) with
trust authentication on 127.0.0.1 only. Both can be stopped and started again on the same port
(fault tests). `redis_binary()` / `postgres_bin()` are None when the binaries are missing, so
the tests can skip and say why.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

PG_DIRS = ("/usr/lib/postgresql/17/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/15/bin")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def redis_binary() -> str | None:
    return shutil.which("redis-server")


def postgres_bin() -> Path | None:
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    for d in PG_DIRS:
        if (Path(d) / "initdb").exists():
            return Path(d)
    return None


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _wait_port(port: int, up: bool, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while _listening(port) != up:
        if time.monotonic() > deadline:
            raise RuntimeError(f"port {port} did not {'open' if up else 'close'} in {timeout}s")
        time.sleep(0.05)


class RedisServer:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = redis_binary()
        assert binary is not None
        self.proc = subprocess.Popen([binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                      "--appendonly", "yes", "--dir", str(self.folder)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait_port(self.port, True)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=20)
            self.proc = None
            _wait_port(self.port, False)


class PostgresServer:
    """One PostgreSQL cluster in a temporary folder; `url(db)` for a database on it."""

    def __init__(self) -> None:
        bindir = postgres_bin()
        assert bindir is not None
        self.bin = bindir
        self.folder = Path(tempfile.mkdtemp(prefix="duckflow-pg-"))
        self.data = self.folder / "data"
        self.port = free_port()
        self.as_root = os.geteuid() == 0
        if self.as_root:
            shutil.chown(self.folder, "postgres", "postgres")
        self._run([str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "duckflow",
                   "--no-sync", "-E", "UTF8"])

    def _run(self, argv: list[str]) -> None:
        if self.as_root:
            argv = ["runuser", "-u", "postgres", "--", *argv]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{argv[0]} failed: {done.stderr.strip()[-500:]}")

    def url(self, db: str = "postgres") -> str:
        return f"postgresql://duckflow@127.0.0.1:{self.port}/{db}"

    def start(self) -> None:
        opts = (f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.folder} "
                "-c fsync=off -c max_connections=200")
        self._run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.folder / "log"),
                   "-o", opts, "-w", "start"])
        _wait_port(self.port, True)

    def stop(self) -> None:
        self._run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop"])
        _wait_port(self.port, False)

    def new_database(self) -> str:
        import psycopg

        name = f"t{os.getpid()}_{int(time.monotonic() * 1e6)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def remove(self) -> None:
        try:
            self.stop()
        except Exception:
            pass
        shutil.rmtree(self.folder, ignore_errors=True)

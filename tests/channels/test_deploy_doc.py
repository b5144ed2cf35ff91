"""docs/deploy.md: its compose file, Caddyfile and Dockerfile parse and fit together (Docker does not run here)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import yaml

DOC = Path(__file__).resolve().parents[2] / "docs" / "deploy.md"


def _block(lang: str) -> str:
    found = re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert len(found) == 1, f"one {lang} block expected in {DOC.name}"
    return str(found[0])


def _compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(_block("yaml"))
    return data


def test_the_compose_file_runs_redis_postgres_several_duckflow_processes_and_a_tls_proxy() -> None:
    services = _compose()["services"]
    assert set(services) == {"redis", "postgres", "duckflow", "proxy"}
    assert "--appendonly" in services["redis"]["command"]  # queued messages survive a Redis restart
    pg_env = services["postgres"]["environment"]
    duck = services["duckflow"]
    env = duck["environment"]
    assert env["DUCKFLOW_REDIS_URL"] == "redis://redis:6379/0"
    url = env["DUCKFLOW_DATABASE_URL"]
    assert url.startswith(f"postgresql://{pg_env['POSTGRES_USER']}:") and url.endswith(
        f"@postgres:5432/{pg_env['POSTGRES_DB']}")
    assert "${POSTGRES_PASSWORD}" in url and "POSTGRES_PASSWORD" in pg_env["POSTGRES_PASSWORD"]
    assert env["DUCKFLOW_SERVER_TOKEN"].startswith("${DUCKFLOW_SERVER_TOKEN:?")
    assert duck["deploy"]["replicas"] >= 2
    assert set(duck["depends_on"]) == {"redis", "postgres"}
    argv = duck["command"]
    assert argv[:2] == ["duckflow", "serve"] and argv[argv.index("--host") + 1] == "0.0.0.0"
    workspace = argv[argv.index("-w") + 1]
    mounts = [m.split(":") for m in duck["volumes"]]
    assert [workspace] == [m[1] for m in mounts if m[0] in _compose()["volumes"]]  # one shared volume, same path
    assert int(argv[argv.index("--workers") + 1]) >= 1
    proxy = services["proxy"]
    assert "443:443" in proxy["ports"] and "duckflow" in proxy["depends_on"]
    assert any(v.endswith(":/etc/caddy/Caddyfile:ro") for v in proxy["volumes"])
    for name in ("redis-data", "pg-data", "workspace", "caddy-data"):
        assert name in _compose()["volumes"]


def test_the_flags_the_compose_file_passes_are_ones_serve_takes() -> None:
    import argparse

    from duckflow.channels.cli import serve_cmd

    parser = argparse.ArgumentParser()
    serve_cmd.configure(parser)
    args = parser.parse_args(_compose()["services"]["duckflow"]["command"][2:])
    assert args.host == "0.0.0.0" and args.workers >= 1


def test_the_proxy_spreads_requests_over_every_replica_without_buffering_streams() -> None:
    caddy = _block("caddy")
    assert caddy.lstrip().startswith("{$DUCKFLOW_DOMAIN} {")  # a domain: Caddy gets its TLS certificate
    assert re.search(r"dynamic a duckflow 8787", caddy)
    port = _compose()["services"]["duckflow"]["command"]
    assert port[port.index("--port") + 1] == "8787"
    assert "flush_interval -1" in caddy  # SSE goes out as it is written
    assert caddy.count("{") == caddy.count("}")


def test_the_image_installs_the_extras_the_shared_stores_need() -> None:
    docker = _block("dockerfile")
    install = next(line for line in docker.splitlines() if line.startswith("RUN pip install"))
    extras = re.search(r"\[(.*?)\]", shlex.split(install[4:])[-1])
    assert extras is not None and {"server", "redis", "postgres"} <= set(extras.group(1).split(","))
    assert "USER duckflow" in docker

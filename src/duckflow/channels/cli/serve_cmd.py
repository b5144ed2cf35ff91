"""`duckflow serve [--host 127.0.0.1] [--port 8787]`: the HTTP API, SSE, web page and chat webhooks.

Needs the `[server]` extra. Binds to 127.0.0.1 unless told otherwise; prints a one-time login
link for the web page (its code sits in the URL fragment, which never reaches a log).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys

from duckflow.channels.cli.common import add_workspace
from duckflow.errors import DuckflowError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8787, help="port (default 8787)")
    add_workspace(parser)
    parser.add_argument("--model", "-m", help="provider:model for the companion, or scripted:demo")
    parser.add_argument("--cors-origin", action="append", default=[], metavar="ORIGIN",
                        help="allow this browser origin (CORS is off by default); repeatable")
    parser.add_argument("--max-body", type=int, default=1_000_000, help="request body cap in bytes")
    parser.add_argument("--max-running", type=int, default=16, metavar="N",
                        help="companion tasks running at once (default 16); more messages wait their turn")
    parser.add_argument("--redis", metavar="URL", help="share sessions with other processes: Redis for what is "
                        "live (with --database; or DUCKFLOW_REDIS_URL, [server] redis_url)")
    parser.add_argument("--database", metavar="URL", help="PostgreSQL for what must last (with --redis; or "
                        "DUCKFLOW_DATABASE_URL, [server] database_url)")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="N processes on one port (needs --redis and --database; or [server] workers)")
    parser.add_argument("--debug", action="store_true", help="uvicorn's debug logging and access log")


def run(args: argparse.Namespace) -> int:
    missing = [m for m in ("fastapi", "uvicorn") if importlib.util.find_spec(m) is None]
    if missing:
        raise DuckflowError(f"`duckflow serve` needs the [server] extra (missing: {', '.join(missing)})",
                            hint="pip install 'duckflow-agent[server]'")
    import uvicorn

    from duckflow.channels.http.app import ServerSettings, create_app, tune_gc
    from duckflow.channels.http.auth import is_loopback, resolve_token, short_token_note, token_path
    from duckflow.channels.http.limits import redact_access_log
    from duckflow.paths import duckflow_home

    if not 0 < args.port < 65536:
        raise DuckflowError(f"port {args.port} is out of range", hint="use 1-65535, e.g. --port 8787")
    from pathlib import Path

    if not Path(args.workspace).expanduser().is_dir():
        raise DuckflowError(f"workspace {args.workspace} is not a folder", hint="pass --workspace DIR")
    _check_listen(args.host, args.port)
    model_note = _model_note(args)
    from duckflow.channels.shared.wiring import urls
    from duckflow.config import load_config

    config = load_config(args.workspace)
    redis_url, database_url = urls(args.redis, args.database, config)
    workers = args.workers if args.workers is not None else config.server.workers
    if workers < 1 or workers > 64:
        raise DuckflowError(f"--workers {workers} is out of range", hint="use 1 to 64")
    if workers > 1 and not redis_url:
        raise DuckflowError("--workers needs --redis and --database: the processes share sessions through them",
                            hint="pass --redis URL --database URL (docs/deploy.md), or run one process")
    token, created = resolve_token(loopback=is_loopback(args.host))
    settings = ServerSettings.from_env(token, workspace=args.workspace, model_name=args.model,
                                       redis_url=redis_url, database_url=database_url,
                                       host=args.host, port=args.port, cors_origins=args.cors_origin,
                                       max_body_bytes=args.max_body, max_running=max(1, args.max_running),
                                       state_dir=str(duckflow_home() / "server"))
    if workers > 1:
        from duckflow.channels.http.workers import preflight

        preflight(settings)
        app = None
        code = ""
    else:
        app = create_app(settings)
        code = app.state.logins.issue()
    shown = "localhost" if args.host in ("127.0.0.1", "::1") else args.host
    out = sys.stderr
    print(f"duckflow serve · workspace {settings.workspace} · http://{shown}:{args.port}", file=out)
    if redis_url:
        from duckflow.channels.shared.pg import redact

        print(f"shared with other processes: Redis {redact(redis_url)} · PostgreSQL {redact(database_url or '')}",
              file=out)
    if created:
        print(f"API token (made now, saved in {token_path()} with mode 0600; shown only this once):\n  {token}",
              file=out)
    if code:
        print(f"open the web page (this link logs you in once): http://{shown}:{args.port}/#code={code}", file=out)
    else:
        print(f"{workers} processes on one port; open http://{shown}:{args.port}/ and paste the API token", file=out)
    if model_note:
        print(model_note, file=out)
    token_note = short_token_note(token)
    if token_note:
        print(token_note, file=out)
    webhooks = [name for name, on in (("Slack /slack/events", settings.slack_signing_secret),
                                       ("LINE /line/webhook", settings.line_channel_secret)) if on]
    if webhooks:
        print(f"webhooks on: {', '.join(webhooks)}", file=out)
    for name, secret, people, var in (("Slack", settings.slack_signing_secret, settings.slack_allowed,
                                       "SLACK_ALLOWED_USERS"),
                                      ("LINE", settings.line_channel_secret, settings.line_allowed,
                                       "LINE_ALLOWED_USERS")):
        if secret and not people:
            print(f"note: {name} hears nobody yet: set {var}=ID1,ID2 (or * for anyone who reaches the bot); "
                  "ignored ids are logged", file=out)
    if not is_loopback(args.host):
        print("warning: listening beyond this machine; put TLS in front of it", file=out)
    redact_access_log()
    tune_gc()
    from duckflow.core import pacing

    pacing.inline_allowed = False  # one loop serves every session: a sync tool never runs on it
    if app is None:
        from duckflow.channels.http.workers import run_workers

        run_workers(settings, workers, debug=args.debug)
        return 0
    uvicorn.run(app, host=args.host, port=args.port, log_level="debug" if args.debug else "warning",
                access_log=args.debug, server_header=False, proxy_headers=False,
                timeout_graceful_shutdown=5)  # open page streams do not hold Ctrl-C up
    return 0


def _check_listen(host: str, port: int) -> None:
    """A one-line error now for an address this machine cannot listen on or a port in use (uvicorn
    would print its own line and exit 3, which means "the guard refused a path" in docs/cli.md)."""
    import socket

    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except (socket.gaierror, UnicodeError) as exc:
        raise DuckflowError(f"cannot listen on {host}: {getattr(exc, 'strerror', None) or exc}",
                            hint="use --host 127.0.0.1 (this machine only) or an address of this machine") from None
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind(address)
        except OSError as exc:
            raise DuckflowError(f"cannot listen on {host}:{port}: {exc.strerror or exc}",
                                hint="another program may use that port: pick another with --port N") from None


def _model_note(args: argparse.Namespace) -> str | None:
    """A warning when no model is configured (the server starts anyway; messages say it too)."""
    from duckflow.companion.models import NoModelError, choose_model_name
    from duckflow.config import load_config

    try:
        choose_model_name(args.model, load_config(args.workspace))
    except NoModelError as exc:
        return f"warning: {exc.message}; messages will fail until one is set (try --model scripted:demo)"
    return None

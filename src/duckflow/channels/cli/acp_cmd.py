"""`duckflow acp`: speak the Agent Client Protocol on stdin / stdout, for an editor that launches Duckflow as its agent.

The editor starts `duckflow acp -w DIR` and talks JSON-RPC 2.0, one message a line
(channels/acp/). Standard output carries protocol frames only; logs and anything else go to
stderr. Needs the `acp` extra: `pip install 'duckflow[acp]'`.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from duckflow.channels.cli.common import add_model_options, add_workspace, model_arg
from duckflow.errors import DuckflowError


def configure(parser: argparse.ArgumentParser) -> None:
    add_workspace(parser, default=None,
                  help="the workspace folder (default: the folder the editor sends with each session)")
    add_model_options(parser)
    parser.add_argument("--max-turns", type=int, default=12, help="stop a prompt after this many turns (default 12)")
    parser.add_argument("--debug", action="store_true", help="log every protocol step to stderr")


class OneLine(logging.Filter):
    """A logged failure as one line (`--debug` keeps the traceback): the protocol package logs
    a bad notification or a failed handler with its traceback, which an editor shows."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if exc is not None:
            record.msg = f"{record.getMessage()}: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
            record.args = None
            record.exc_info = record.exc_text = None
        return True


def run(args: argparse.Namespace) -> int:
    try:
        import acp  # noqa: F401
    except ImportError:
        raise DuckflowError("the Agent Client Protocol package is not installed",
                            hint="pip install 'duckflow[acp]'") from None
    import asyncio

    from duckflow.channels.acp.serve import serve

    workspace = None
    if args.workspace:
        workspace = Path(args.workspace).expanduser().resolve()
        if not workspace.is_dir():
            raise DuckflowError(f"workspace {workspace} is not a folder",
                                hint="pass an existing folder with -w DIR")
    from duckflow.channels.cli.logs import MaskingHandler

    handler = MaskingHandler()  # stderr, masked by the sanitizer as Duckflow's own records are
    handler.setFormatter(logging.Formatter("duckflow acp: %(levelname)s %(name)s: %(message)s"))
    if not args.debug:
        handler.addFilter(OneLine())
    logging.basicConfig(handlers=[handler], level=logging.DEBUG if args.debug else logging.WARNING, force=True)
    asyncio.run(serve(workspace=workspace, model_name=model_arg(args.model), codec=args.codec,
                      mode=args.mode, max_turns=args.max_turns))
    return 0

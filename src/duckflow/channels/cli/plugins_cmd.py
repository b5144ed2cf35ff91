"""`duckflow plugins`: the plugins your config declares, what each gave or why it failed, and the installed ones.

    duckflow plugins          # one line per plugin
    duckflow plugins --json
"""

from __future__ import annotations

import argparse
from typing import Any

from duckflow.channels.cli.common import print_json

QUIET_PLUGIN_ERRORS = True  # this command shows the failures itself


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    from duckflow.core.plugins import declared_status, tool_entry_points

    rows: list[dict[str, Any]] = [{"name": s.name, "kind": s.kind, "tools": s.tools, "error": s.error}
                                  for s in declared_status()]
    declared = {r["name"] for r in rows if r["kind"] == "entry point"}
    installed = [{"name": name, "value": ep.value} for name, ep in sorted(tool_entry_points().items())
                 if name not in declared]
    if args.json:
        print_json({"declared": rows, "installed_not_declared": installed})
        return 0
    if not rows:
        print("No plugins declared. Declare them in your config file:\n"
              '  [plugins]\n  modules = ["my_pkg.tools"]        # or "my_pkg.tools:word_count"\n'
              '  entry_points = ["word_count"]      # installed duckflow.tools entry points, "*" for all')
    for r in rows:
        state = f"failed: {r['error']}" if r["error"] else ("tools: " + (", ".join(r["tools"]) or "none"))
        print(f"{r['name']}  ({r['kind']})  {state}")
    if installed:
        print("installed, not declared (loaded when an agent first uses them): "
              + ", ".join(i["name"] for i in installed))
    return 0

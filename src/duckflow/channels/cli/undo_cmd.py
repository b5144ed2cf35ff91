"""`duckflow undo [--list] [--redo] [ID]`: restore the workspace as it was before a change by a tool (a stack: redo, undo again)."""

from __future__ import annotations

import argparse
import os
import sys

from duckflow.channels.cli.common import add_workspace, print_json, when


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", nargs="?", type=int, metavar="ID",
                        help="the checkpoint to undo (default: the latest change not undone)")
    parser.add_argument("--list", action="store_true", help="list the checkpoints, newest first")
    parser.add_argument("--redo", action="store_true", help="bring back the change the last undo took away")
    add_workspace(parser)
    parser.add_argument("--limit", type=int, default=30, help="how many to list (default 30)")
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    from duckflow.errors import DuckflowError
    from duckflow.workspace.checkpoints import Checkpoints, has_checkpoints, planted_store

    root = args.workspace or os.getcwd()
    if not os.path.isdir(root):
        raise DuckflowError(f"{root} is not a folder", hint="pass -w DIR")
    planted = planted_store(root)  # never read: Duckflow keeps its checkpoints in DUCKFLOW_HOME
    ignored = (f"ignored {planted}: Duckflow did not write it (its checkpoints live in "
               "DUCKFLOW_HOME); it may have come with a cloned repository") if planted else ""
    if not has_checkpoints(root):
        if planted is not None:
            raise DuckflowError(f"refused: nothing to undo; {ignored}",
                                hint="nothing was changed; delete that folder if you do not "
                                "know where it came from")
        if args.list:
            print("[]" if args.json else "no checkpoints in this workspace yet")
            return 0
        raise DuckflowError(f"no checkpoints recorded by Duckflow for {os.path.realpath(root)}",
                            hint="only changes made by Duckflow's tools can be undone; pass "
                            "-w DIR for another folder")
    if planted is not None:
        print(f"note: {ignored}", file=sys.stderr)
    cps = Checkpoints(root)
    try:
        if args.list:
            items = cps.list(args.limit)
            if args.json:
                print_json([{"id": c.id, "created": c.created, "tool": c.tool,
                                   "summary": c.summary, "paths": list(c.paths),
                                   "undone": c.undone} for c in items])
            elif not items:
                print("no checkpoints in this workspace yet")
            for c in items if not args.json else []:
                stamp = when(c.created, seconds=True)
                flag = " (undone)" if c.undone else ""
                print(f"#{c.id:<5} {stamp}  {c.summary or c.tool}{flag}")
            return 0
        from duckflow.workspace.undowords import undo_words

        result = cps.redo(args.id) if args.redo else cps.undo(args.id)
        if args.json:
            print_json({"undone": result.undone_id, "restored": list(result.restored),
                        "saved_as": result.saved_as, "redone": result.redone,
                        "effects": [{"path": p, "effect": e} for p, e in result.effects],
                        "not_restored": [{"path": p, "why": w} for p, w in result.not_restored]})
        else:
            print(f"{undo_words(result)} (change #{result.undone_id})")
            print("`duckflow undo` takes it back again" if result.redone
                  else "`duckflow undo --redo` brings the change back")
        return 0
    finally:
        cps.close()

"""A correction keeps what the person did not object to: the re-ask shows the rejected proposal with
their words, and a rename ("no — call it greet.py instead") is written by the loop with the content kept.

After a no with words, the next step's prompt shows what was proposed (the file and its content,
or the command) and the words, and asks to change only what the words object to. When the words
only rename the file a denied write creates — they name one other file of the same kind and say
"call it", "name it", "instead", "as" … — the loop proposes that write itself: the same content
under the new name, no model call (a small model asked to rename was seen rewriting the script
and losing its content). It passes the gate as any write.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any

SHOWN_LINES = 60  # of a rejected file's content, shown back in the re-ask
_FILE = re.compile(r"(?<![\w/.-])([\w][\w./-]*\.[A-Za-z0-9]{1,8})(?![\w/-])")
_RENAME_CUE = re.compile(r"\b(call(ed)?|name[ds]?|rename|save|instead|as|use)\b|という名前|に(して|変更)", re.I)


def words_of(spec: Any) -> str:
    return str(spec.description or "").removeprefix("their words: ").strip()


def proposal_text(call: dict[str, Any]) -> str:
    """A proposed call as the model would read it back: the file and its content, or the command."""
    args = call.get("arguments") or {}
    name = str(call.get("name") or "")
    if name in ("write_file", "edit_file"):
        lines = str(args.get("content") or "").splitlines()
        more = f"\n… ({len(lines) - SHOWN_LINES} more lines)" if len(lines) > SHOWN_LINES else ""
        verb = "create" if name == "write_file" else "edit"
        return f"{verb} {args.get('path', '')}:\n" + "\n".join(lines[:SHOWN_LINES]) + more
    return f"{name.replace('_', ' ')} {args.get('path') or args.get('command') or ''}".strip()


def rejected_lines(denied: Sequence[Any], last: int = 2) -> list[str]:
    """The re-ask's lines for the proposals the person said no to: each proposal and their words."""
    out = []
    for spec in list(denied)[-last:]:
        said = words_of(spec)
        shown = proposal_text(spec.call) if spec.call else f"{spec.kind} {spec.path}"
        if said and said != "no reason given":
            out.append(f"The person said no to this proposal:\n{shown}\nTheir words: {said}\n"
                       "Change only what their words ask for; keep the rest of the proposal as it was.")
        else:
            out.append(f"The person said no to this proposal (no reason given):\n{shown}\n"
                       "Do something different.")
    return out


def renamed_to(spec: Any) -> str | None:
    """The new name when the person's words only rename the file a denied write creates."""
    call = spec.call or {}
    if call.get("name") != "write_file":
        return None
    old = str((call.get("arguments") or {}).get("path") or "")
    said = words_of(spec)
    if not old or not said or not _RENAME_CUE.search(said):
        return None
    names = [n.rstrip(".") for n in _FILE.findall(said)]
    new = [n for n in dict.fromkeys(names) if n != old and PurePosixPath(n).name != PurePosixPath(old).name]
    if len(new) != 1 or PurePosixPath(new[0]).suffix != PurePosixPath(old).suffix or ".." in new[0]:
        return None
    return new[0]


def rename_correction(denied: Sequence[Any], exists: Any, proposed: set[str]) -> tuple[str, str, str] | None:
    """(old path, new path, content) of the write the loop proposes for a rename correction of the
    last denied action; None when the words say more than a rename, or it was proposed already."""
    if not denied:
        return None
    spec = list(denied)[-1]
    new = renamed_to(spec)
    if new is None or exists(new) or new in proposed:
        return None
    args = (spec.call or {}).get("arguments") or {}
    return str(args.get("path") or ""), new, str(args.get("content") or "")


def symops_write(path: str, content: str, why: str) -> str:
    """A Sym-Ops reply that writes `content` to `path` (its fence longer than any dash line in it)."""
    fence = "---"
    while any(line.strip() == fence or line.startswith(fence) for line in content.splitlines()):
        fence += "-"
    body = content if content.endswith("\n") or not content else content + "\n"
    return f"~ {why}\n#c0.9 #m0.8 #f0.9 #s0.9\n$ create @ {path}\n{fence}\n{body}{fence}\n~ next: DONE\n"

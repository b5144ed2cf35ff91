"""Which commands auto-approve may run without a person: an allow-list, judged on the parsed command.

Under auto-approve a command runs unasked only when every simple command in it is known to be
read-only or test-only; anything else waits for a person, however harmless its name looks.
The deny-list analysis (gate/commands.py, gate/scripts.py) still runs, as an early warning on
the approval card; it is not the boundary. `unlisted(...)` returns "" for a listed command,
else why it is not listed (one short clause a person reads).

On the list:
- read-only programs (`ls`, `cat`, `grep`, `head`, `wc`, `sort` without `-o`, `find` without
  `-delete`/`-exec`/`-fprint`, ...), piped or chained, with no redirection except to /dev/null
  or another descriptor, no `$`, backticks, here-documents, assignments or subshells, and every
  path they are given inside the workspace through links (gate/readonly.py);
- `git status|log|diff|show|...` with no option before the subcommand (`-c`, `-C`,
  `--exec-path`, ...) and none of the options that write or run a program (`--output`,
  `--ext-diff`, `-O`), alone or with read-only programs; it runs with the repository's own
  program-running settings off (workspace/gitsafe.py);
- `python3 FILE [ARGS]` when the script analysis finds nothing destructive in FILE; without
  a sandbox only when this session wrote FILE and neither it nor a workspace module it
  imports uses a network module (with bubblewrap there is no network, so a repository's
  own script runs too: `python3 report.py`);
- the project's test command: `run_tests` with no command, `pytest`, `python3 -m pytest`,
  `npm test`, `make test`, `cargo test`, `go test`, exactly as the runner is called (a quiet or
  verbose flag and the tests to run by path; no option that changes what runs).
What a listed command then does to the files is checked after it runs (workspace/effects.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

from duckflow.gate.commands import _tokens
from duckflow.gate.readonly import (
    judge_program,
    judge_test_command,
    leaves,
    outside_arguments,
    test_runner,
)

if TYPE_CHECKING:
    from pathlib import Path

_PUNCTUATION = frozenset(";&|()<>\n")
_REDIRECTIONS = frozenset({">", ">>", ">&", "<", "<&", "&>", "&>>"})
_NETWORK_MODULES = frozenset({
    "urllib", "http", "socket", "ssl", "requests", "httpx", "aiohttp", "ftplib", "smtplib",
    "poplib", "imaplib", "telnetlib", "xmlrpc", "asyncio", "websocket", "websockets", "paramiko",
    "pycurl", "urllib3", "socketserver", "multiprocessing", "webbrowser", "nntplib", "selectors"})


def unlisted(command: str | None, *, tool: str = "execute_shell", written: Collection[str] = (),
             plain: bool = True, read_text: Callable[[str], str | None] | None = None,
             root: Path | None = None) -> str:
    """"" when auto-approve may run `command` (see the module docstring), else why not.

    `written`: workspace paths this session wrote (a new script may run); `plain`: no sandbox
    (a script must not import a network module); `read_text`: a workspace file's text;
    `root`: the workspace, to resolve the paths a read-only program is given (through links;
    without it they are judged by their words only)."""
    if not command or not command.strip():
        if tool != "run_tests":
            return "an empty command"
        return _networked(written, read_text) if plain else ""
    if any(c in command for c in "$`") or "<<" in command or "<(" in command or ">(" in command:
        return "it expands variables, substitutions or here-documents"
    try:
        tokens = _tokens(command)
    except ValueError:
        return "it cannot be parsed"
    simple: list[str] = []
    kinds: set[str] = set()
    for tok in [*tokens, ";"]:
        if tok and set(tok) <= _PUNCTUATION:  # shlex groups operators: `;\n` is one token
            if tok in ("&&", "||") or set(tok) <= set(";|\n"):
                why = _simple(simple, written, plain, read_text, root, kinds)
                if why:
                    return why
                simple = []
                continue
            if tok not in _REDIRECTIONS:
                return f"`{tok.strip()}` (background jobs, subshells) is not on the list"
        simple.append(tok)
    if "git" in kinds and kinds & {"test", "script"}:  # git runs alone or with read-only programs only
        return "git together with a script or the tests is not on the list; run it on its own"
    return ""


def _strip_redirections(words: list[str], root: Path | None = None) -> tuple[list[str], str]:
    out: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w.isdigit() and i + 1 < len(words) and words[i + 1] and set(words[i + 1]) <= set("<>&"):
            i += 1
            continue
        if w and set(w) <= set("<>&|"):
            target = words[i + 1] if i + 1 < len(words) else ""
            if w in (">&", "<&") and (target.isdigit() or target == "-"):
                pass  # 2>&1: a descriptor
            elif w in ("<",):  # reading a file: one inside the workspace
                why = outside_arguments([target], root)
                if why:
                    return [], why
            elif target not in ("/dev/null",):
                return [], f"the redirection `{w} {target}` writes a file"
            i += 2
            continue
        out.append(w)
        i += 1
    return out, ""


def _simple(words: list[str], written: Collection[str], plain: bool,
            read_text: Callable[[str], str | None] | None, root: Path | None = None,
            kinds: set[str] | None = None) -> str:
    words, why = _strip_redirections(words, root)
    if why:
        return why
    if not words:
        return ""
    kinds = set() if kinds is None else kinds
    name = words[0]
    if "=" in name.split("/")[0] and not name.startswith(("-", "/", ".")):
        return f"`{name}` sets a variable for the command"
    if test_runner(words):  # what they do to files is checked after they run
        kinds.add("test")
        why = judge_test_command(words, root)
        if why:
            return why
        return _networked(written, read_text) if plain else ""
    if name in ("python", "python3"):
        kinds.add("script")
        return _script(words[1:], written, plain, read_text)
    kinds.add("git" if name == "git" else "read")
    return judge_program(name, words[1:], root)


def _script(args: list[str], written: Collection[str], plain: bool,
            read_text: Callable[[str], str | None] | None) -> str:
    from duckflow.gate.callcheck import call_check_module
    from duckflow.gate.operation import normalize_path
    from duckflow.gate.scripts import script_hazard

    module = call_check_module(args)  # `-c "import m; print(m.f(1))"`: judged as `python3 m.py`
    if module is not None:
        args = [f"{module}.py"]
    if not args or args[0].startswith("-"):
        return "python with options or code from its input is not on the list"
    path = normalize_path(args[0])
    if path not in written and plain:
        return (f"`{args[0]}` was not written in this session (without a sandbox only new "
                "scripts run unasked)")
    text = read_text(path) if read_text is not None and not leaves(path) else None
    if text is None:
        return f"`{args[0]}` cannot be read to be judged"
    why = script_hazard("python", text)
    if why:
        return f"`{args[0]}`: {why}"
    if plain and _reaches_network(path, text, read_text):
        return f"`{args[0]}` uses the network, and there is no sandbox to take it away"
    return ""


def _reaches_network(path: str, text: str, read_text: Callable[[str], str | None] | None,
                     limit: int = 20) -> bool:
    """True when the script, or a workspace module it imports (followed up to `limit` files),
    imports a network module."""
    seen = {path}
    todo = [text]
    while todo:
        names = _imports(todo.pop())
        if names & _NETWORK_MODULES:
            return True
        for name in sorted(names):
            for cand in (f"{name}.py", f"{name}/__init__.py"):
                if cand in seen or read_text is None:
                    continue
                seen.add(cand)
                found = read_text(cand)
                if found is not None:
                    todo.append(found)
                if len(seen) > limit:
                    return True  # too many to judge: assume it may
    return False


_JS_NETWORK = re.compile(r"""require\(\s*['"](node:)?(https?|net|dgram|tls|child_process)['"]|"""
                         r"""from\s+['"](node:)?(https?|net|dgram|tls)['"]|\bfetch\s*\(|WebSocket""")


def _networked(written: Collection[str], read_text: Callable[[str], str | None] | None) -> str:
    """Without a sandbox the tests have the network: a test or module this session wrote that
    reaches it keeps them from running unasked ("" when none does)."""
    for path in sorted(written):
        text = read_text(path) if read_text is not None and path.endswith((".py", ".js", ".mjs", ".cjs", ".ts")) else None
        if text is None:
            continue
        uses = (_imports(text) & _NETWORK_MODULES) if path.endswith(".py") else _JS_NETWORK.search(text)
        if uses:
            return f"`{path}`, written in this session, uses the network, and there is no sandbox to take it away"
    return ""


def _imports(text: str) -> set[str]:
    """The top-level modules a Python text imports (a text that does not parse: "?")."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {"?"} | _NETWORK_MODULES
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module.split(".")[0])
    return out


def no_sandbox_notice(sandbox: str) -> str | None:
    """The one line to say when auto-approve starts without a sandbox (None: bubblewrap runs).

    Said once, at `duckflow autoapprove on` and `duckflow run --auto-approve-workspace`."""
    from duckflow.workspace.sandbox import bwrap_usable

    if sandbox != "none" and bwrap_usable():
        return None
    why = ('workspace.sandbox = "none"' if sandbox == "none"
           else "bubblewrap cannot run on this machine")
    return (f"Note: no sandbox ({why}), so commands would have the network. Auto-approve runs "
            "only read-only commands, new scripts that use no network and the project's tests; "
            "every other command waits for a person.")

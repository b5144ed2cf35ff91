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
- only inside a box (workspace/box.py: no network, the host read-only, the workspace a
  copy-on-write overlay): `python3 FILE [ARGS]` (a workspace script, or the call check of a
  workspace module), and the project's test command: `run_tests` with no command, `pytest`,
  `python3 -m pytest`, `python3 -m unittest`, `npm test`, `make test`, `cargo test`, `go test`, exactly as the runner
  is called (a quiet or verbose flag and the tests to run by path; no option that changes
  what runs).
Code-running needs a box: without one (`workspace.sandbox = "none"`, no usable bubblewrap) no
script, test or build runs unasked, whoever wrote it and whatever it imports (reading a script
for network imports is a deny-list: the model writes the script). In the box the kernel
decides what it may do, and every lasting effect is shown after it runs
(companion/effectscheck.py, workspace/staging.py).
"""

from __future__ import annotations

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
NO_BOX = ("it runs code, and there is no box to run it in (no network, read-only files): "
          "without one, scripts, tests and builds wait for a person")


def unlisted(command: str | None, *, tool: str = "execute_shell", written: Collection[str] = (),
             plain: bool = True, read_text: Callable[[str], str | None] | None = None,
             root: Path | None = None) -> str:
    """"" when auto-approve may run `command` (see the module docstring), else why not.

    `written`: workspace paths this session wrote; `plain`: no box (then nothing that runs
    code is listed); `read_text`: a workspace file's text;
    `root`: the workspace, to resolve the paths a read-only program is given (through links;
    without it they are judged by their words only)."""
    if not command or not command.strip():
        if tool != "run_tests":
            return "an empty command"
        return NO_BOX if plain else ""
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
        return NO_BOX if plain else ""
    if name in ("python", "python3"):
        kinds.add("script")
        return _script(words[1:], written, plain, read_text)
    kinds.add("git" if name == "git" else "read")
    return judge_program(name, words[1:], root)


def _script(args: list[str], written: Collection[str], plain: bool,
            read_text: Callable[[str], str | None] | None) -> str:
    """`python3 FILE ARGS` or a call check: only in a box, and the kernel decides what it may
    do there (its text is not read for a verdict: that would be a deny-list again)."""
    from duckflow.gate.callcheck import call_check_module

    module = call_check_module(args)  # `-c "import m; print(m.f(1))"`: runs the module m.py
    if module is not None:
        if read_text is None or read_text(f"{module}.py") is None:
            return f"`{module}` is not a module of the workspace (code in `-c` is not on the list)"
        args = [f"{module}.py"]
    if not args or args[0].startswith("-"):
        return "python with options or code from its input is not on the list"
    if plain:
        return NO_BOX
    if leaves(args[0]):
        return f"`{args[0]}` is outside the workspace"
    return ""


def no_sandbox_notice(sandbox: str) -> str | None:
    """The one line to say when auto-approve starts without a box (None: there is one).

    Said once, at `duckflow autoapprove on` and `duckflow run --auto-approve-workspace`."""
    from duckflow.workspace.box import backend, how_to_get_one

    if backend(sandbox) is not None:
        return None
    why = 'workspace.sandbox = "none"' if sandbox == "none" else "none works on this machine"
    return (f"Note: no box to run code in ({why}): auto-approve covers file writes and read-only "
            f"commands; scripts, tests and builds will ask you. To get a box, {how_to_get_one()}.")

"""Read-only programs read only the workspace: what each may be given, judged on its arguments and the disk.

Auto-approve runs a read-only program (`cat`, `grep`, `git diff`, ...) unasked; this module says
when one would still reach outside the workspace or change something:

- every argument that names a path (the word, an `--opt=VALUE` value, a short option's attached
  value, a glob's matches) is resolved on disk, symlinks included, and refused when it leaves
  the workspace: `cat notes.txt` where notes.txt links to ~/.ssh/id_rsa is refused;
- a program told to follow links while it walks a folder (`grep -R`, `find -L`, `du -L`,
  `diff -r`, ...) is refused when a link under that folder leads out;
- long options are matched as getopt matches them: any unambiguous prefix, so `sort --o=x`
  is `sort --output=x`;
- a test command runs exactly as the project's runner is called, with no option from the
  model that changes what runs (`make test SHELL=...`, `go test -exec`, `npm test
  --script-shell=...`, `cargo test --config ...`, `pytest -p plugin`).

`judge_program(name, args, root)` returns "" when the program may run unasked, else why not.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator
from pathlib import Path

from duckflow.workspace.gitsafe import GIT_READ

READ_ONLY = frozenset({
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "pwd", "echo", "printf",
    "true", "false", "stat", "du", "nl", "tac", "cut", "tr", "basename", "dirname", "realpath",
    "readlink", "which", "diff", "cmp", "comm", "uniq", "sort", "find", "tree", "date", "md5sum",
    "sha1sum", "sha256sum", "column", "test", "[", "seq", "id", "uname", "whoami"
})
# per program: (short option letters, long options) that write a file or run a program
_FORBIDDEN: dict[str, tuple[str, tuple[str, ...]]] = {
    "sort": ("o", ("--output", "--compress-program", "--files0-from")),
    "tree": ("o", ("--output",)),
    "rg": ("", ("--pre", "--pre-glob", "--hostname-bin")),
    "date": ("sf", ("--set", "--file")),
    "tail": ("f", ("--follow",)),
    "wc": ("", ("--files0-from",)),
    "du": ("", ("--files0-from",)),
}
# per program: (short option letters, long options) that follow links while walking a folder
_FOLLOWS: dict[str, tuple[str, tuple[str, ...]]] = {
    "grep": ("R", ("--dereference-recursive",)),
    "egrep": ("R", ("--dereference-recursive",)),
    "fgrep": ("R", ("--dereference-recursive",)),
    "rg": ("L", ("--follow",)),
    "du": ("L", ("--dereference",)),
    "ls": ("L", ("--dereference",)),
    "tree": ("l", ()),
    "diff": ("r", ("--recursive",)),  # diff follows links by default
}
_FIND_ACTIONS = frozenset({"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0",
                           "-fprintf", "-fls"})
_FIND_FOLLOW = frozenset({"-L", "-follow"})
_GIT_FORBIDDEN = ("--output", "--ext-diff", "-O", "--open-files-in-pager", "--exec", "-c",
                  "--config-env", "--textconv", "--filters", "--run", "--upload-pack",
                  "--show-signature")
_WALK_LIMIT = 20_000


def judge_program(name: str, args: list[str], root: Path | None) -> str:
    """"" when read-only program `name` may run unasked with `args` in `root`, else why not."""
    if name == "git":
        return judge_git(args, root)
    if "/" in name or name not in READ_ONLY:
        return f"`{name}` is not on the auto-approve list of read-only commands"
    why = outside_arguments(args, root)
    if why:
        return why
    if name == "find":
        bad = next((a for a in args if a in _FIND_ACTIONS), None)
        if bad:
            return f"`find {bad}` changes files or runs a program"
        if any(a in _FIND_FOLLOW for a in args):
            return _links_out([a for a in args if not a.startswith("-")] or ["."], root, "find -L")
        return ""
    if name == "uniq" and len([a for a in args if not a.startswith("-")]) > 1:
        return "`uniq IN OUT` writes its output file"
    if option_given(args, *_FORBIDDEN.get(name, ("", ()))):
        bad = option_given(args, *_FORBIDDEN[name])
        return f"`{name} {bad}` writes a file or runs a program"
    follow = _FOLLOWS.get(name)
    if follow and option_given(args, *follow):
        dirs = [a for a in args if not a.startswith("-")] or ["."]
        return _links_out(dirs, root, f"{name} {option_given(args, *follow)}")
    return ""


def judge_git(args: list[str], root: Path | None) -> str:
    """`git SUB ...` with a read-only subcommand and no option that writes or runs a program
    (it then runs with the repository's own settings switched off: workspace/gitsafe.py)."""
    if not args or args[0].startswith("-"):
        return "git options before the subcommand (`-c`, `-C`, ...) are not on the list"
    sub, rest = args[0], args[1:]
    if sub not in GIT_READ:
        return f"`git {sub}` is not on the auto-approve list (only status, log, diff, show, ...)"
    for a in rest:
        if any(abbreviates(a, o) if o.startswith("--") else (a == o or a.startswith(o))
               for o in _GIT_FORBIDDEN):
            return f"`git {sub} {a}` writes a file or runs a program"
    return outside_arguments(rest, root)


def option_given(args: list[str], short: str, long: tuple[str, ...]) -> str:
    """The first argument that sets one of the options (short letters in a cluster, or a long
    option by any unambiguous prefix, as getopt reads it); "" when none does."""
    for a in args:
        if a == "--":
            break
        if a.startswith("--") and any(abbreviates(a, o) for o in long):
            return a
        if short and a.startswith("-") and not a.startswith("--") and set(a[1:]) & set(short):
            return a
    return ""


def abbreviates(arg: str, option: str) -> bool:
    """True when `arg` sets `option` as getopt_long and git read it: `--o=x`, `--out x` and
    `--output` are all `--output` (any prefix past the dashes counts; an ambiguous one is an
    error to the program, so refusing it loses nothing)."""
    given = arg.split("=", 1)[0]
    return len(given) > 2 and option.startswith(given)


def leaves(arg: str) -> bool:
    """True when an argument names a path outside the workspace by its words alone (`/etc/x`,
    `~/.ssh`, `../x`)."""
    value = arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg
    if value == "/dev/null":
        return False
    return value.startswith(("/", "~")) or ".." in value.split("/")


def outside_arguments(args: list[str], root: Path | None) -> str:
    """Why one of `args` reaches outside the workspace ("" when none does): by its words, and
    with `root` known, on disk through symlinks and globs."""
    for arg in args:
        for value in _path_words(arg):
            if leaves(value):
                return f"`{value}` is outside the workspace"
            if root is not None:
                escaped = _escapes(root, value)
                if escaped:
                    return f"`{escaped}` leads outside the workspace (a link)"
    return ""


def _path_words(arg: str) -> Iterator[str]:
    """The words of one argument that may name a file: the word, `--opt=VALUE`'s value and a
    short option's attached value (`-f/etc/shadow`)."""
    if arg.startswith("--"):
        if "=" in arg:
            yield arg.split("=", 1)[1]
        return
    if arg.startswith("-") and len(arg) > 2:
        yield arg[2:]
        return
    if arg and arg != "-":
        yield arg


def _escapes(root: Path, value: str) -> str:
    """The path (or glob match) in `value` that resolves outside `root`, else ""."""
    real_root = os.path.realpath(root)
    if any(c in value for c in "*?["):
        names = glob.glob(value, root_dir=root)[:1000]
    else:
        names = [value]
    for name in names:
        path = os.path.join(root, name)
        if not os.path.lexists(path):
            continue
        real = os.path.realpath(path)
        if real != real_root and not real.startswith(real_root + os.sep):
            return name
    return ""


def _links_out(dirs: list[str], root: Path | None, what: str) -> str:
    """Why following links under `dirs` would leave the workspace ("" when no link there does)."""
    if root is None:
        return f"`{what}` follows links, and the workspace is not known here to check them"
    real_root = os.path.realpath(root)
    seen = 0
    for d in dirs:
        top = os.path.join(root, d)
        for here, subdirs, files in os.walk(top):
            for name in (*subdirs, *files):
                seen += 1
                path = os.path.join(here, name)
                if os.path.islink(path):
                    real = os.path.realpath(path)
                    if real != real_root and not real.startswith(real_root + os.sep):
                        return f"`{what}` would follow `{os.path.relpath(path, root)}` out of the workspace"
            if seen > _WALK_LIMIT:
                return f"`{what}` follows links in a folder too big to check ({_WALK_LIMIT}+ entries)"
    return ""


# -- the test command: exactly the project's runner ------------------------------------------

_PYTEST_FLAGS = frozenset({"-q", "-qq", "-v", "-vv", "-x", "-s", "--quiet", "--verbose", "--exitfirst",
                           "--no-header", "--tb=short", "--tb=line", "--tb=no", "--tb=long", "-rA"})
# runner words -> the extra words it may take (flags; "path": workspace paths; "name": a filter)
_RUNNERS: tuple[tuple[tuple[str, ...], frozenset[str], str], ...] = (
    (("pytest",), _PYTEST_FLAGS, "path"),
    (("python", "-m", "pytest"), _PYTEST_FLAGS, "path"),
    (("python3", "-m", "pytest"), _PYTEST_FLAGS, "path"),
    (("python3", "-m", "unittest"), frozenset({"-q", "-v", "--quiet", "--verbose"}), "path"),  # the stdlib runner
    (("npm", "test"), frozenset({"--silent", "-s"}), ""),
    (("npm", "run", "test"), frozenset({"--silent", "-s"}), ""),
    (("make", "test"), frozenset(), ""),
    (("cargo", "test"), frozenset({"-q", "--quiet"}), "name"),
    (("go", "test"), frozenset({"-v", "-count=1", "-short"}), "path"),
)


def test_runner(words: list[str]) -> tuple[str, ...] | None:
    """The runner `words` start with (`("npm", "test")`), or None when it is no test command."""
    for runner, _, _ in _RUNNERS:
        if tuple(words[:len(runner)]) == runner:
            return runner
    return None


def judge_test_command(words: list[str], root: Path | None) -> str:
    """"" when `words` call the project's test runner as it is called (a quiet or verbose flag,
    the tests to run by path), else why not: an option the model adds can make the runner run
    another program (`go test -exec`, `make test SHELL=`, `npm test --script-shell=`)."""
    for runner, flags, positional in _RUNNERS:
        if tuple(words[:len(runner)]) != runner:
            continue
        rest = words[len(runner):]
        i = 0
        while i < len(rest):
            w = rest[i]
            if w in flags:
                i += 1
                continue
            if runner[-1] == "pytest" and w == "-k" and i + 1 < len(rest):
                i += 2  # a test-name expression (pytest's own small language, not Python)
                continue
            if runner == ("go", "test") and w == "-run" and i + 1 < len(rest):
                i += 2
                continue
            if positional == "path" and not w.startswith("-") and "=" not in w:
                why = outside_arguments([w.split("::", 1)[0]], root)
                if why:
                    return why
                i += 1
                continue
            if positional == "name" and not w.startswith("-") and "=" not in w and "/" not in w:
                i += 1
                continue
            return (f"`{w}` changes how `{' '.join(runner)}` runs; the test command runs unasked "
                    "only as the project calls it")
        return ""
    return "not a test command"

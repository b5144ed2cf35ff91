"""Read-only git without the repository's say: a command that only reads with git runs with every setting that would run a program switched off.

A cloned repository's `.git/config` can make `git status` run a program (`core.fsmonitor`),
`git diff` run another (`diff.external`, a driver's `textconv` or `command`, a `filter`'s
`clean`), and a folder that merely looks like a git folder (`HEAD`, `config`, `objects/`) is
taken for a bare repository. When every git in a shell command is a read-only subcommand,
`neutral_git(root)` gives what the command runs with instead:

- `GIT_DIR` and `GIT_WORK_TREE` set to the workspace's own `.git` (a look-alike folder is never
  a repository; no `.git` means "not a git repository"), system and global config not read;
- `GIT_CONFIG_COUNT/KEY_n/VALUE_n` (the environment form of `git -c`, which outranks the
  repository's config): `core.fsmonitor=false`, `core.hooksPath=/dev/null`, no pager, no
  signature checks (`gpg.*program=false`), submodules not entered, every filter driver the
  config names emptied;
- a `git` first on PATH that adds `--no-ext-diff --no-textconv` to `diff`, `log`, `show` and
  `--no-textconv` to `blame` (no configuration key turns those off, only these options do).

Used by shell.py for listed commands; a command a person approved that writes with git
(`git commit`) runs with the repository as it is.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

GIT_READ = frozenset({"status", "log", "diff", "show", "blame", "shortlog", "describe",
                      "rev-parse", "ls-files", "grep", "cat-file"})
_FIXED = (("core.fsmonitor", "false"), ("core.hooksPath", "/dev/null"), ("core.pager", "cat"),
          ("safe.bareRepository", "explicit"), ("log.showSignature", "false"),
          ("gpg.program", "false"), ("gpg.openpgp.program", "false"),
          ("gpg.x509.program", "false"), ("gpg.ssh.program", "false"),
          ("diff.ignoreSubmodules", "all"), ("status.submoduleSummary", "false"),
          ("submodule.recurse", "false"), ("core.untrackedCache", "false"))
_DRIVER_KEYS = {"filter": ("clean", "smudge", "process"), "diff": ("textconv", "command")}
ENV_NAMES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL",
             "GIT_CONFIG_COUNT", "GIT_OPTIONAL_LOCKS", "GIT_TERMINAL_PROMPT", "GIT_PAGER",
             "GIT_ATTR_NOSYSTEM", "GIT_NO_REPLACE_OBJECTS")
_SHIM = """#!/bin/sh
# Duckflow: read-only git with the repository's diff programs off (gitsafe.py)
case "$1" in
  diff|log|show) sub=$1; shift; exec {git} "$sub" --no-ext-diff --no-textconv "$@" ;;
  blame) shift; exec {git} blame --no-textconv "$@" ;;
  *) exec {git} "$@" ;;
esac
"""


def only_read_git(command: str) -> bool:
    """True when `command` runs git, and every git in it is a read-only subcommand."""
    try:
        lex = shlex.shlex(command, posix=True, punctuation_chars=";&|()<>\n")
        lex.whitespace_split = True
        lex.commenters = ""
        tokens = list(lex)
    except ValueError:
        return False
    found = False
    start = True
    for i, tok in enumerate(tokens):
        if tok and set(tok) <= set(";&|()<>\n"):
            start = True
            continue
        if start and os.path.basename(tok) == "git":
            sub = tokens[i + 1] if i + 1 < len(tokens) else ""
            if sub not in GIT_READ:
                return False
            found = True
        start = False
    return found


def git_dir(root: Path) -> Path | None:
    """The workspace's own repository folder: `.git` at the root, or the nearest `.git` folder
    above it; a `.git` file (a worktree) is followed to its folder. None: no repository."""
    here = Path(os.path.realpath(root))
    for folder in (here, *here.parents):
        dot = folder / ".git"
        if dot.is_dir() and not dot.is_symlink():
            return dot
        if dot.is_file() and not dot.is_symlink():
            try:
                line = dot.read_text("utf-8", "replace").strip()
            except OSError:
                return None
            if line.startswith("gitdir:"):
                target = (folder / line[7:].strip()).resolve()
                return target if target.is_dir() else None
            return None
    return None


def _drivers(env: dict[str, str], git: str, cwd: Path) -> list[tuple[str, str]]:
    """(key, "") for every filter and diff driver program the effective config names."""
    try:
        out = subprocess.run([git, "config", "--null", "--name-only", "--list"], cwd=cwd, env=env,
                             stdin=subprocess.DEVNULL, capture_output=True, timeout=5).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    keys: list[tuple[str, str]] = []
    for name in out.decode("utf-8", "replace").split("\0"):
        head, _, rest = name.partition(".")
        driver, _, last = rest.rpartition(".")
        if head.lower() in _DRIVER_KEYS and driver and last.lower() in _DRIVER_KEYS[head.lower()]:
            keys.append((f"{head}.{driver}.{last}", ""))
    return keys


def neutral_git(root: Path, env: dict[str, str]) -> tuple[dict[str, str], str]:
    """(`env` plus the variables above, a new folder holding the `git` wrapper to put first on
    PATH). The caller removes the folder."""
    git = shutil.which("git", path=env.get("PATH")) or "git"
    repo = git_dir(root)
    out = {k: v for k, v in env.items() if not k.startswith("GIT_")}
    out.update({"GIT_DIR": str(repo) if repo else str(Path(root) / ".git"),
                "GIT_WORK_TREE": str(repo.parent if repo and repo.name == ".git" else root),
                "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
                "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat",
                "GIT_ATTR_NOSYSTEM": "1"})
    pairs = list(_FIXED) + (_drivers(out, git, Path(root)) if repo else [])
    out["GIT_CONFIG_COUNT"] = str(len(pairs))
    for i, (key, value) in enumerate(pairs):
        out[f"GIT_CONFIG_KEY_{i}"] = key
        out[f"GIT_CONFIG_VALUE_{i}"] = value
    # not under /tmp: bubblewrap gives the command a private /tmp, which would hide it
    spare = "/var/tmp" if os.access("/var/tmp", os.W_OK) else None
    shim_dir = tempfile.mkdtemp(prefix="duckflow-git-", dir=spare)
    shim = Path(shim_dir) / "git"
    shim.write_text(_SHIM.replace("{git}", shlex.quote(git)), encoding="utf-8")
    shim.chmod(0o755)
    out["PATH"] = f"{shim_dir}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
    return out, shim_dir

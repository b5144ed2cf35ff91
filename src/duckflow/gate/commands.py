"""What a shell command may destroy, for the gate: the shell tool's own analysis plus a parsed look.

A command's effects are never checkpointed, so the gate treats every command that deletes,
moves, overwrites, rewrites git history or hides what it runs as hard-required (a person
decides, whatever an auto-approve scope says). `command_hazard(cmd)` answers why, or None.

It starts with `workspace.shell.destructive_reason` (the shell tool's list) and then splits
the command into simple commands with `shlex` (quotes and backslashes are undone the way the
shell does, so `r''m -rf *` and `\\rm` are seen as `rm`) and looks at each program and its
redirections. It errs towards asking: a command it cannot parse, or whose program comes from
a variable, is hard-required too. This is a judgement for the gate, not a sandbox: the
sandbox (workspace/shell.py) is what bounds a command a person did approve.
"""

from __future__ import annotations

import re
import shlex

# Separators between simple commands (shlex's punctuation tokens that end a command).
_SEPARATORS = frozenset({";", "&", "&&", "||", "|", "|&", "(", ")", ";;", "\n"})
_REDIRECT_CLOBBER = frozenset({">", ">|", "&>", ">&"})
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# Programs that only run the next word as a program (their own options are skipped).
_WRAPPERS = frozenset({"sudo", "doas", "env", "nice", "nohup", "time", "command", "builtin",
                       "exec", "stdbuf", "ionice", "chronic", "unbuffer", "setsid", "timeout",
                       "xargs", "parallel", "busybox", "strace", "watch", "flock"})
_DELETERS = {
    "rm": "rm deletes files", "rmdir": "rmdir deletes folders", "unlink": "unlink deletes a file",
    "shred": "shred destroys file contents", "srm": "srm deletes files",
    "wipe": "wipe destroys files", "truncate": "truncate cuts files",
}
_MOVERS = {
    "mv": "mv moves files and can replace existing ones",
    "cp": "cp can overwrite existing files",
    "install": "install can overwrite existing files",
    "rsync": "rsync can overwrite or delete files",
    "dd": "dd overwrites its output",
    "ln": "ln can replace existing files",
    "tee": "tee overwrites the files it names",
    "patch": "patch changes files in place",
    "rename": "rename renames files and can replace existing ones",
    "mmv": "mmv moves files and can replace existing ones",
}
# Programs that reach the network: what they send cannot be recalled (the sandbox has no
# network; plain mode does). Package managers only for the subcommands that download or publish.
_NETWORK = frozenset({"curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "ssh", "scp",
                      "sftp", "ftp", "lftp", "aria2c", "httpie", "http", "xh", "npx", "pipx"})
_NETWORK_SUBCOMMANDS = {
    "pip": ("install", "download", "wheel"), "pip3": ("install", "download", "wheel"),
    "npm": ("install", "i", "add", "publish", "exec", "ci", "update"),
    "yarn": ("add", "install", "publish", "dlx"), "pnpm": ("add", "install", "i", "publish", "dlx"),
    "gem": ("install", "push"), "cargo": ("install", "publish"), "go": ("install", "get"),
    "twine": ("upload",), "docker": ("push", "pull", "run", "login"), "uv": ("pip", "add", "sync"),
    "poetry": ("add", "install", "publish"), "git": ("fetch", "clone", "ls-remote"),
    "apt": ("install",), "apt-get": ("install",), "brew": ("install",),
}
_IN_PLACE = {"sed": ("-i", "--in-place"), "perl": ("-i", "-pi"), "ruby": ("-i",)}
_INLINE = {  # interpreters given code inline: what they run is not visible to the gate
    "sh": "-c", "bash": "-c", "zsh": "-c", "dash": "-c", "ksh": "-c", "fish": "-c",
    "python": "-c", "python3": "-c", "node": "-e", "perl": "-e", "ruby": "-e", "php": "-r",
    "lua": "-e", "Rscript": "-e", "emacs": "--eval", "vim": "-c", "vi": "-c", "nvim": "-c",
}
_GIT_RISKY = {
    "reset": "git reset can throw away work", "clean": "git clean deletes untracked files",
    "checkout": "git checkout can overwrite uncommitted changes",
    "restore": "git restore overwrites uncommitted changes", "rm": "git rm deletes files",
    "mv": "git mv moves files", "rebase": "git rebase rewrites history",
    "filter-branch": "git filter-branch rewrites history", "filter-repo": "rewrites history",
    "push": "git push publishes (and cannot be recalled)", "gc": "git gc can drop objects",
    "prune": "git prune drops objects", "reflog": "git reflog can drop history",
    "update-ref": "git update-ref moves refs", "worktree": "git worktree can remove folders",
    "submodule": "git submodule can replace folders", "apply": "git apply changes files",
    "am": "git am changes files", "merge": "git merge changes files",
    "pull": "git pull changes files", "cherry-pick": "git cherry-pick changes files",
    "revert": "git revert changes files", "switch": "git switch can overwrite files",
}
_GIT_SAFE_FLAGS = {"stash": ("drop", "clear", "pop", "apply"), "branch": ("-d", "-D", "--delete",
                   "-m", "-M", "--move", "-f", "--force"), "tag": ("-d", "--delete", "-f")}


def command_hazard(command: str) -> str | None:
    """Why `command` is destructive or cannot be undone (a person must decide), or None."""
    from duckflow.workspace.shell import destructive_reason

    why = destructive_reason(command)
    if why is not None:
        return why
    return _parsed_hazard(command, depth=0)


_SHELLS_AND_INTERPRETERS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "python",
                                      "python3", "node", "perl", "ruby", "php", "pwsh"})
_SCRIPT_RUNNERS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "source", ".", "pwsh",
                             "powershell", "cmd", "wscript", "cscript", "java"})


def _tokens(command: str) -> list[str]:
    """Shell words and operators; a newline ends a command as `;` does (raises ValueError)."""
    lex = shlex.shlex(command, posix=True, punctuation_chars=";&|()<>\n")
    lex.whitespace_split = True
    lex.commenters = ""
    lex.whitespace = " \t\r"
    return list(lex)


def programs_run(command: str) -> list[str]:
    """The files a command runs by path: `./x.sh`, `sub/tool`, `sh x.sh`, `bash -e x`,
    `source env.sh`, `java -jar a.jar` (best effort; [] when it cannot be parsed)."""
    try:
        tokens = _tokens(command)
    except ValueError:
        return []
    out: list[str] = []
    simple: list[str] = []
    for tok in [*tokens, ";"]:
        if tok and set(tok) <= set(";&|()<>\n"):
            name, args = _program(simple)
            first = next((w for w in simple if not _ASSIGNMENT.match(w)), "")
            if "/" in first and name:
                out.append(first)
            if name in _SCRIPT_RUNNERS:
                script = next((a for a in args if not a.startswith("-")), None)
                if name in ("sh", "bash", "zsh", "dash", "ksh", "fish") and "-c" in args:
                    script = None
                if script:
                    out.append(script)
            simple = []
            continue
        simple.append(tok)
    return out


def _parsed_hazard(command: str, depth: int) -> str | None:
    if depth > 4:
        return "the command nests too deeply to be analysed"
    for inner in _substitutions(command):
        why = _parsed_hazard(inner, depth + 1)
        if why is not None:
            return why
    try:
        tokens = _tokens(command)
    except ValueError as exc:
        return f"the command cannot be analysed ({exc})"
    simple: list[str] = []
    for i, tok in enumerate(tokens):
        if tok in _SEPARATORS or set(tok) <= set(";&|()\n"):
            why = _simple_hazard(simple, depth)
            if why is not None:
                return why
            simple = []
            continue
        if set(tok) <= set("<>&|") and tok:
            target = tokens[i + 1] if i + 1 < len(tokens) else ""
            if _clobbers(tok, target):
                return f"the redirection `{tok} {target}` overwrites a file"
        simple.append(tok)
    return _simple_hazard(simple, depth)


def _substitutions(command: str) -> list[str]:
    """The text inside `$(...)`, `<(...)`, `>(...)` and backticks (best effort, outermost)."""
    out = re.findall(r"`([^`]*)`", command)
    for m in re.finditer(r"[$<>]\(", command):
        depth, start = 0, m.end()
        for j in range(m.end() - 1, len(command)):
            if command[j] == "(":
                depth += 1
            elif command[j] == ")":
                depth -= 1
                if depth == 0:
                    out.append(command[start:j])
                    break
    return out


def _clobbers(op: str, target: str) -> bool:
    if op not in _REDIRECT_CLOBBER and not (op.endswith(">") and not op.endswith(">>")):
        return False
    if op == ">&" and (target.isdigit() or target == "-"):
        return False  # 2>&1: a descriptor, not a file
    return target not in _HARMLESS_TARGETS


# Reserved words that start or continue a compound command: the program comes after them.
_KEYWORDS = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for",
                       "in", "case", "esac", "select", "function", "{", "}", "!", "[[", "]]"})


def _program(words: list[str]) -> tuple[str, list[str]]:
    """The program a simple command runs (wrappers and assignments skipped) and its arguments."""
    i = 0
    while i < len(words):
        w = words[i]
        if _ASSIGNMENT.match(w) or (w.isdigit() and i + 1 < len(words)):
            i += 1
            continue
        if w in _KEYWORDS:  # `if x; then rm …; fi`, `do rm …`, `{ rm …; }`, `! rm …`
            i += 2 if w in ("function", "for", "select", "case") else 1  # and the name they take
            continue
        name = w.rsplit("/", 1)[-1]
        if name in _WRAPPERS:
            i += 1
            while i < len(words) and (words[i].startswith("-") or _ASSIGNMENT.match(words[i])
                                      or (name == "timeout" and words[i][:1].isdigit())):
                i += 1
            continue
        return name, words[i + 1:]
    return "", []


def _simple_hazard(words: list[str], depth: int) -> str | None:
    # redirection operators were already judged; drop them and their targets
    cleaned: list[str] = []
    skip = False
    for w in words:
        if skip:
            skip = False
            continue
        if w and set(w) <= set("<>&|"):
            skip = True
            continue
        cleaned.append(w)
    name, args = _program(cleaned)
    if not name:
        return None
    # a wrapper's option values (`xargs -n 1 rm`, `xargs -I {} rm {}`) can hide the program:
    # every later word that names a program is judged as the start of a command
    wrapped = next((i for i, w in enumerate(cleaned) if w.rsplit("/", 1)[-1] in _WRAPPERS), None)
    if wrapped is not None:
        for i in range(wrapped + 1, len(cleaned)):
            if cleaned[i].rsplit("/", 1)[-1] != name and not cleaned[i].startswith("-"):
                why = _simple_hazard(cleaned[i:], depth + 1) if depth < 4 else None
                if why is not None:
                    return why
    if name in _SHELLS_AND_INTERPRETERS:
        heredoc = any(w.startswith("<<") for w in words)
        first = next((a for a in args if not a.startswith("-") or a == "-"), None)
        flags_only = first is None and not any(
            a in ("-c", "-e", "-m", "-r", "--version", "-V", "--help") for a in args)
        if heredoc or first == "-" or flags_only:
            return f"`{name}` runs code from its input (a pipe or here-document)"
    if name.startswith("$") or "$" in name:
        return f"the program name `{name}` comes from a variable"
    if name in ("eval", "source", "."):
        return f"`{name}` runs code the gate cannot see"
    if name in _DELETERS:
        return _DELETERS[name]
    if name in _MOVERS:
        if name == "tee" and any(a in ("-a", "--append") for a in args):
            return None
        if name == "cp" and any(a in ("-n", "--no-clobber", "--update=none") for a in args):
            return None
        return _MOVERS[name]
    if name in _IN_PLACE and any(a.startswith(flag) for a in args for flag in _IN_PLACE[name]
                                 if a.startswith("-")):
        return f"{name} -i edits files in place"
    if name == "find" and any(a in ("-delete", "-exec", "-execdir", "-ok", "-okdir",
                                    "-fprint", "-fprintf", "-fls") for a in args):
        return "find with -delete/-exec changes or deletes files"
    if name in ("chmod", "chown", "chgrp") and any(a.startswith("-") and "R" in a or a == "--recursive"
                                                   for a in args):
        return f"recursive {name}"
    if name in _NETWORK:
        return f"{name} reaches the network (what it sends cannot be recalled)"
    sub = next((a for a in args if not a.startswith("-")), "")
    if name in _NETWORK_SUBCOMMANDS and sub in _NETWORK_SUBCOMMANDS[name]:
        return f"{name} {sub} reaches the network (downloads or publishes)"
    kind, module, rest = python_target(args) if re.sub(r"[0-9.]+$", "", name) == "python" else ("", "", [])
    if kind == "module":  # `python3 -m X`, also `-Im X`, `-mX`
        if module in _NETWORK_SUBCOMMANDS and rest[:1] and rest[0] in _NETWORK_SUBCOMMANDS[module]:
            return f"python -m {module} {rest[0]} reaches the network (downloads or publishes)"
        if (why := module_hazard(module, rest)) is not None:
            return f"python -m {module}: {why}"
    if name in ("pytest", "py.test", "pip", "pip3") and (why := module_hazard(name, args)) is not None:
        return f"{name}: {why}"
    if name == "git":
        return _git_hazard(args)
    flag = _INLINE.get(re.sub(r"[0-9.]+$", "", name) or name) or _INLINE.get(name)
    idx = _inline_flag(name, flag, args) if flag else None
    if idx is not None:
        code = next((a for a in args[idx + 1:] if a != "--"), "")
        if name in ("sh", "bash", "zsh", "dash", "ksh", "fish"):
            return _parsed_hazard(code, depth + 1) if code else None
        return f"`{name} {args[idx]}` runs inline code the gate cannot see into"
    if name in ("awk", "gawk", "mawk", "nawk", "busybox-awk") and any(
            _AWK_EFFECTS.search(a) or a.startswith("-i") for a in args):
        return f"{name} runs commands or writes files from its program"
    if name in ("tar", "bsdtar", "gtar") and any(
            a in ("--extract", "--get", "--remove-files", "--overwrite", "--unlink-first")
            or (re.fullmatch(r"-?[A-Za-z]+", a) and "x" in a and a == args[0]) for a in args):
        return f"{name} extracting or removing can overwrite or delete files"
    if name == "unzip" and any(a.startswith("-") and "o" in a for a in args):
        return "unzip -o overwrites existing files"
    return None


def python_target(args: list[str]) -> tuple[str, str, list[str]]:
    """What `python ARGS` runs, read as CPython reads its options: ("module", name, rest),
    ("script", path, rest), ("inline", "", []) for -c, or ("", "", []) (stdin, nothing).
    Options cluster (`-Im tidy`, `-mtidy`, `-Wignore`); only -m, -c, -W and -X take a value
    (`python3 -I tidy.py` and `-O tidy.py` run tidy.py)."""
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            return ("script", args[i + 1], args[i + 2:]) if i + 1 < len(args) else ("", "", [])
        if a == "-" or not a.startswith("-"):
            return ("script", a, args[i + 1:]) if a != "-" else ("", "", [])
        if a.startswith("--"):
            i += 2 if a == "--check-hash-based-pycs" else 1
            continue
        for j, ch in enumerate(a[1:], 2):
            if ch in "mc":
                value, nxt = (a[j:], i + 1) if a[j:] else (args[i + 1] if i + 1 < len(args) else "", i + 2)
                return ("module", value, args[nxt:]) if ch == "m" else ("inline", "", [])
            if ch in "WX":
                i += 0 if a[j:] else 1  # the value is the rest of the word, or the next word
                break
        i += 1
    return ("", "", [])


# What a module run with `python -m` (or the same program by name) does with its arguments:
# the standard library's own command lines that delete, overwrite, serve or change the
# interpreter, and pytest's options that delete or write the path they name.
_SERVES = "serves files to whoever connects (in plain mode, to the network)"
_PYTEST_WRITES = ("--basetemp", "--junitxml", "--junit-xml", "--resultlog", "--result-log",
                  "--report-log", "--html", "--json-report-file", "--override-ini", "-o",
                  "--cov-report", "--rootdir", "--confcutdir", "-c", "--config-file")


def module_hazard(module: str, args: list[str]) -> str | None:
    """Why `python -m MODULE ARGS` deletes, overwrites, serves or changes the interpreter, or None."""
    flags = [a.split("=", 1)[0] for a in args if a.startswith("-")]
    words = [a for a in args if not a.startswith("-")]
    if module in ("venv", "virtualenv") and "--clear" in flags:
        return "--clear deletes the contents of the folder it names"
    if module in ("zipfile", "tarfile") and ({"-e", "--extract"} & set(flags)):
        return "extracting can overwrite existing files"
    if module == "json.tool" and len([a for a in args if not a.startswith("-")
                                      and not a.isdigit()]) >= 2:
        return "it writes its output file (overwriting what is there)"
    if module in ("http.server", "smtpd", "xmlrpc.server", "webbrowser") or (
            module == "pydoc" and {"-p", "-b", "-w"} & set(flags)):
        return "it " + (_SERVES if module != "pydoc" or "-w" not in flags else "writes .html files")
    if module in ("cProfile", "profile") and {"-o", "--outfile"} & set(flags):
        return "-o overwrites the file it names"
    if module == "ensurepip" or (module in ("pip", "pip3") and words[:1] == ["uninstall"]):
        return "it changes the packages installed outside the workspace"
    if module in ("pytest", "py.test"):
        bad = [f for f in flags if f in _PYTEST_WRITES]
        if bad:
            return f"`{bad[0]}` deletes or writes the path it names (or moves where pytest writes)"
    return None


_AWK_EFFECTS = re.compile(r"system\s*\(|\|\s*(getline|\")|>\s*\"|print[^;}]*>\s*[A-Za-z\"]")
# Long forms and other letters that also take inline code.
_INLINE_MORE = {"perl": ("-E",), "node": ("-p", "--eval", "--print"), "ruby": (),
                "python": (), "python3": (), "php": ("--run",), "bash": ("--command",)}


def _inline_flag(name: str, flag: str, args: list[str]) -> int | None:
    """Where the option that gives inline code is: `-c`, also inside a cluster (`-ec`,
    `-Sc`, `-le`, `-pe`) or as a long form; only among the options before the first operand."""
    base = re.sub(r"[0-9.]+$", "", name) or name
    more = _INLINE_MORE.get(base, ()) + _INLINE_MORE.get(name, ())
    letters = {flag[1]} | {m[1] for m in more if len(m) == 2}
    if flag in args:
        return args.index(flag)
    for i, a in enumerate(args):
        if a == "--" or not a.startswith("-") or a == "-":
            return None
        if a == flag or a in more or a.split("=", 1)[0] in more:
            return i
        if not a.startswith("--") and letters & set(a[1:]):
            return i
    return None


def _git_hazard(args: list[str]) -> str | None:
    i = 0
    while i < len(args) and args[i].startswith("-"):  # git -C dir, -c k=v
        i += 2 if args[i] in ("-C", "-c", "--git-dir", "--work-tree") else 1
    if i >= len(args):
        return None
    sub, rest = args[i], args[i + 1:]
    if sub in _GIT_RISKY:  # `git checkout NAME` may name a file: asked too
        return _GIT_RISKY[sub]
    if sub in _GIT_SAFE_FLAGS and any(a in _GIT_SAFE_FLAGS[sub] for a in rest):
        return f"git {sub} {' '.join(a for a in rest if a in _GIT_SAFE_FLAGS[sub])} drops or replaces work"
    return None


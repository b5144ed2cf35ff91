"""What the workspace files a command runs would do: scripts (`sh x`, `./x`, `python3 x.py`)
and build files (`make` → Makefile, `npm test` → package.json), judged by their text.

The model can write a file in one call and run it in the next; the gate reads what the command
will run (through the guard, gate/guarded.py) and judges it like a command (gate/commands.py).
A judgement for the gate, not a sandbox.
"""

from __future__ import annotations

import posixpath
import re

from duckflow.gate.callcheck import call_check_module
from duckflow.gate.commands import (
    _ASSIGNMENT,
    _KEYWORDS,
    _program,
    _tokens,
    command_hazard,
    python_target,
)

# --------------------------------------------------------------- scripts a command runs
# A command that runs a workspace file (`sh notes.txt`, `./tidy`, `python3 clean.py`) does what
# the file says: the model can write the file in one call and run it in the next, so the file's
# text is judged like a command's (a shell script by the analysis above, others by the calls
# that delete, overwrite, move or run programs).
_INTERPRETERS = {"python": "python", "python3": "python", "pypy3": "python", "node": "node",
                 "nodejs": "node", "deno": "node", "bun": "node", "perl": "perl", "ruby": "ruby",
                 "php": "php"}
_SHELL_RUNNERS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "source", "."})
# Calls that delete, overwrite, move or run programs whatever object they are called on …
_PY_EFFECTS = frozenset({
    "rmtree", "unlink", "rmdir", "removedirs", "renames", "truncate", "ftruncate", "system",
    "popen", "Popen", "check_call", "check_output", "getoutput", "getstatusoutput", "spawnl",
    "spawnlp", "spawnv", "spawnvp", "spawnve", "execl", "execle", "execlp", "execv", "execve",
    "execvp", "execvpe", "startfile", "write_text", "write_bytes", "copyfile", "copytree",
    "symlink_to", "hardlink_to", "symlink", "exec", "eval", "__import__", "import_module",
    "CDLL", "PyDLL", "dlopen", "killpg", "posix_spawn", "posix_spawnp", "fork", "forkpty"})
# … and these only on a module that does so (`os.remove`, `shutil.move`, `subprocess.run`;
# `items.remove(x)`, `text.replace(a, b)` and `asyncio.run(main())` are ordinary code).
_PY_MODULE_EFFECTS = frozenset({"remove", "rename", "replace", "move", "run", "call", "copy",
                                "copy2", "chmod", "chown", "link", "kill", "mkfifo", "open"})
_PY_MODULES = frozenset({"os", "shutil", "subprocess", "posix", "pty", "ctypes", "pathlib",
                         "io", "_io", "builtins", "tempfile", "sys"})
_OPAQUE_EFFECTS = {
    "node": re.compile(r"\b(unlink|rm|rmdir|rename|truncate|writeFile|copyFile|cp|symlink|chmod)"
                       r"(Sync)?\s*\(|child_process|\bexec(Sync|File)?\s*\(|\bspawn|\beval\s*\(|"
                       r"Deno\.(remove|writeTextFile|writeFile|run|Command)|Bun\.(write|spawn)"),
    "perl": re.compile(r"\b(unlink|rmdir|rmtree|remove_tree|rename|truncate|system|exec|eval|"
                       r"move|copy|chmod|symlink)\b|`|qx|\bopen\s*\(?[^;]*[>|]"),
    "ruby": re.compile(r"\b(FileUtils|File\.(delete|unlink|rename|write|truncate|symlink)|"
                       r"Dir\.(delete|rmdir|unlink)|system|exec|spawn|eval|IO\.popen|Open3)\b|`|%x"),
    "php": re.compile(r"\b(unlink|rmdir|rename|file_put_contents|fopen|system|exec|shell_exec|"
                      r"passthru|popen|proc_open|eval|copy|chmod|symlink)\s*\(|`"),
}


def scripts_run(command: str) -> list[tuple[str, str]]:
    """(language, path) of each workspace file a command hands to a shell or an interpreter:
    `sh x`, `source x`, `./x` (its `#!` line decides), `python3 x.py`, `node x.js`, … (best effort)."""
    try:
        tokens = _tokens(command)
    except ValueError:
        return []
    out: list[tuple[str, str]] = []
    simple: list[str] = []
    cwd = ""  # `cd sub && ./run`: later relative paths are inside sub
    for tok in [*tokens, ";"]:
        if not (tok and set(tok) <= set(";&|()<>\n")):
            simple.append(tok)
            continue
        name, args = _program(simple)
        if name in ("cd", "pushd"):
            dest = next((a for a in args if not a.startswith("-")), "")
            cwd = "$" if "$" in dest or dest in ("", "-", "~") or "$" in cwd else \
                dest if dest.startswith("/") else posixpath.normpath(posixpath.join(cwd, dest))
            simple = []
            continue
        before = len(out)
        first = next((w for w in simple if not _ASSIGNMENT.match(w) and w not in _KEYWORDS), "")
        lang = _INTERPRETERS.get(name) or _INTERPRETERS.get(re.sub(r"[0-9.]+$", "", name))
        if "/" in first and name and name not in _INTERPRETERS:
            out.append(("exec", first))
        if name in ("pytest", "py.test"):  # the program: what it is told to load (as `-m pytest`)
            out += [("python", f) for f in module_files("pytest", args)[3:]]
        if lang == "python":
            kind, target, rest = python_target(args)
            if kind == "module":
                out += [("python", f) for f in module_files(target, rest)]
            elif kind == "script":
                out.append(("variable" if "$" in target else "python", target))
            elif kind == "inline" and (called := call_check_module(args)) is not None:
                out += [("python", f) for f in module_files(called, [])]  # gate/callcheck.py
        elif name in _SHELL_RUNNERS or lang:
            i = 0
            while i < len(args) and args[i].startswith("-") and args[i] != "-":
                if lang in ("node", "ruby") and args[i] in _PRELOAD and i + 1 < len(args):
                    # `node -r ./tidy.js`: the preloaded file runs first (also with no script)
                    req = args[i + 1]
                    out += [(lang, req)] + [(lang, req + ext) for ext in _EXTS[lang]]
                    i += 2
                    continue
                if args[i] in ("-c", "-e", "-E", "--eval", "--command") or (
                        args[i] == "-r" and lang == "php"):
                    i = len(args)  # inline code: judged by gate/commands.py
                    break
                i += 2 if args[i] in ("-W", "-X", "-o", "-O", "-I", "-r") and lang else 1
            if i < len(args) and args[i] != "-":
                out.append(("variable" if "$" in args[i] else lang or "shell", args[i]))
        if cwd:
            out[before:] = [(lng if "$" not in cwd else "variable",
                             p if p.startswith("/") else posixpath.join(cwd, p))
                            for lng, p in out[before:]]
        simple = []
    return out


# options of node and ruby that load a file before the script (or with none)
_PRELOAD = frozenset({"-r", "--require", "--import", "--loader", "--experimental-loader"})
_EXTS = {"node": (".js", ".cjs", ".mjs"), "ruby": (".rb",)}

# `python -m X` runs X from the workspace when it is there (the model can write tidy.py and run
# `python3 -m tidy`); these modules in turn run a script or module named among their arguments
_SCRIPT_MODULES = frozenset({"cProfile", "profile", "pdb", "trace", "runpy", "timeit"})
_VALUE_FLAGS = frozenset({"-o", "--outfile", "-s", "--sort", "-c", "--file", "-C", "--coverdir",
                          "--ignore-module", "--ignore-dir", "-n", "--number", "-r", "--repeat"})
_TEST_NAME = re.compile(r"(^|/)(test_[^/]*|[^/]*_test|conftest)\.py$")


def module_files(module: str, rest: list[str]) -> list[str]:
    """The workspace files `python -m MODULE REST` may run (those that exist are judged): the
    module itself (`a.b` → a/__init__.py, a/b.py, a/b/__init__.py, a/b/__main__.py), the script
    or module a runner such as cProfile or pdb is given, a file pytest or unittest is asked to
    load that is not named like a test (a test file is the test runner's business), and the
    modules pytest imports by name (`-p tidy`, `--pyargs tidy`)."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", module):
        return []
    parts = module.split(".")
    out = [posixpath.join(*parts[:k], "__init__.py") for k in range(1, len(parts))]
    base = posixpath.join(*parts)
    out += [f"{base}.py", f"{base}/__init__.py", f"{base}/__main__.py"]
    if module in _SCRIPT_MODULES:
        i = 0
        while i < len(rest):
            a = rest[i]
            if a == "-m" and i + 1 < len(rest):
                return out + module_files(rest[i + 1], rest[i + 2:])
            if a.startswith("-"):
                i += 2 if a in _VALUE_FLAGS else 1
                continue
            return [*out, a] if module != "timeit" else out
    if module in ("pytest", "py", "unittest"):
        pyargs = "--pyargs" in rest
        for i, a in enumerate(rest):
            if a.startswith("-p") and a not in ("-p", "--pyargs"):  # `-ptidy`: a plugin module
                out += module_files(a[2:], [])
            if i and rest[i - 1] == "-p" and not a.startswith("no:"):  # `-p tidy` imports tidy
                out += module_files(a, [])
                continue
            if a.startswith("-") or _TEST_NAME.search(a.split("::", 1)[0]):
                continue
            if pyargs and module != "unittest":  # `--pyargs tidy` imports the module tidy
                out += module_files(a, [])
            if a.endswith(".py") or "::" in a:
                out.append(a.split("::", 1)[0])
            elif module == "unittest" and not a.split(".")[-1].startswith("test"):
                out += module_files(a, [])
    return out


def script_hazard(language: str, text: str, *, boxed: bool = False) -> str | None:
    """Why running a script of `language` ("shell", "python", "node", "perl", "ruby", "php",
    or "exec" for a file run by path) with this text is destructive, or None. `boxed`: it runs
    in the copy-on-write box, where writing a file cannot change an existing one unseen (a
    Python script's writes are then not called destructive)."""
    if language == "variable":
        return "it runs a file named by a variable (the gate cannot read it)"
    if language == "exec":
        line = text.split("\n", 1)[0]
        if line.startswith("#!"):
            words = line[2:].split()
            prog = words[0].rsplit("/", 1)[-1] if words else ""
            if prog == "env" and len(words) > 1:
                prog = next((w for w in words[1:] if not w.startswith("-")), "")
            base = re.sub(r"[0-9.]+$", "", prog)
            language = _INTERPRETERS.get(prog) or _INTERPRETERS.get(base) or (
                "shell" if base in _SHELL_RUNNERS or base.endswith("sh") else "unknown")
        else:
            language = "shell"  # a text file without `#!` is run by /bin/sh
    if language == "shell":
        body = "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("#"))
        return destructive_text(body)
    if language == "python":
        return _python_hazard(text, boxed)
    pattern = _OPAQUE_EFFECTS.get(language)
    if pattern is None:
        return "it runs a program the gate cannot read"
    m = pattern.search(text)
    return f"it calls `{m.group(0).strip()}`" if m else None


def destructive_text(body: str) -> str | None:
    """`command_hazard` for a whole script (the shell tool's list, then the parsed look)."""
    return command_hazard(body)


_WRITES = frozenset({"write_text", "write_bytes"})


def _python_hazard(text: str, boxed: bool = False) -> str | None:
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None if len(text) < 100_000 else "it is too large to be analysed"
    modules = set(_PY_MODULES)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name.split(".")[0] in _PY_MODULES}
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in _PY_MODULES:
            bad = [a.name for a in node.names
                   if a.name in _PY_EFFECTS or a.name in _PY_MODULE_EFFECTS or a.name == "*"]
            if bad and node.module != "pathlib":
                return f"it imports `{', '.join(bad)}` from {node.module}"
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        owner = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else ""
        called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if boxed and called in _WRITES | {"open", "fdopen"}:
            continue  # in the box a write reaches the workspace only as a new file, or asked
        if called in _PY_EFFECTS or (called in _PY_MODULE_EFFECTS and owner in modules and called != "open"):
            return f"it calls `{called}(…)`, which deletes, overwrites, moves or runs programs"
        if called in ("getattr", "__getattribute__", "vars") and node.args and isinstance(
                node.args[0], ast.Name) and node.args[0].id in modules:
            return "it looks functions of a system module up by name (the gate cannot see what it calls)"
        if called in ("open", "fdopen") and (owner in modules or not owner):
            mode = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == "mode"), None)
            if mode is not None and not (isinstance(mode, ast.Constant) and isinstance(mode.value, str)
                                         and not set(mode.value) & set("w+")):
                return "it opens a file for writing (overwrites what is there)"
        if called == "open" and owner not in modules and owner and node.args and isinstance(
                node.args[0], ast.Constant) and isinstance(node.args[0].value, str) and set(node.args[0].value) & set("w+"):
            return "it opens a file for writing (overwrites what is there)"  # Path(x).open("w")
    return None


# ----------------------------------------------------- build files a command runs
# `make` and `npm test` run what Makefile / package.json say; the model can write those too.
_MAKE_BUILTINS = {"RM": "rm -f", "MAKE": "make", "CC": "cc", "CXX": "c++", "AR": "ar",
                  "SHELL": "sh", "CP": "cp", "MV": "mv"}


def build_files_run(command: str) -> list[tuple[str, str, list[str]]]:
    """(kind, file, targets) for `make [-C dir] [targets]` ("make", "Makefile") and
    `npm/pnpm/yarn test|start|run X` ("npm", "package.json") in a command (best effort)."""
    try:
        tokens = _tokens(command)
    except ValueError:
        return []
    out: list[tuple[str, str, list[str]]] = []
    simple: list[str] = []
    for tok in [*tokens, ";"]:
        if not (tok and set(tok) <= set(";&|()<>\n")):
            simple.append(tok)
            continue
        name, args = _program(simple)
        simple = []
        if name in ("make", "gmake"):
            folder, makefile, targets, i = "", "", [], 0
            while i < len(args):
                a = args[i]
                if a in ("-C", "--directory") and i + 1 < len(args):
                    folder, i = args[i + 1], i + 2
                    continue
                if a in ("-f", "--file", "--makefile") and i + 1 < len(args):
                    makefile, i = args[i + 1], i + 2
                    continue
                if not a.startswith("-") and "=" not in a:
                    targets.append(a)
                i += 1
            names = [makefile] if makefile else ["GNUmakefile", "makefile", "Makefile"]
            out += [("make", posixpath.join(folder, n) if folder else n, targets) for n in names]
        elif name in ("npm", "pnpm", "yarn", "bun"):
            words = [a for a in args if not a.startswith("-")]
            if words[:1] in (["run"], ["run-script"]) and len(words) > 1:
                out.append(("npm", "package.json", [words[1]]))
            elif words[:1] in (["test"], ["t"], ["start"], ["restart"], ["stop"]):
                out.append(("npm", "package.json", ["test" if words[0] == "t" else words[0]]))
    return out


def build_file_hazard(kind: str, text: str, targets: list[str]) -> str | None:
    """Why the recipes/scripts `targets` of this Makefile or package.json text are destructive."""
    if kind == "npm":
        import json

        try:
            scripts = json.loads(text).get("scripts") or {}
        except (ValueError, AttributeError, RecursionError):
            return None  # npm refuses a broken package.json too
        for target in targets:
            for name in (f"pre{target}", target, f"post{target}"):
                body = scripts.get(name) if isinstance(scripts, dict) else None
                if isinstance(body, str) and (why := command_hazard(body)):
                    return f"the `{name}` script: {why}"
        return None
    variables = dict(_MAKE_BUILTINS)
    rules: dict[str, tuple[list[str], list[str]]] = {}
    order: list[str] = []
    current: list[str] = []
    for line in text.replace("\\\n", " ").splitlines():
        if line.startswith("\t"):
            for t in current:
                rules[t][1].append(line.strip().lstrip("@-+ "))
            continue
        m = re.match(r"^\s*(?:export\s+|override\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*[:?+!]?=\s*(.*)$", line)
        if m:
            variables[m.group(1)] = m.group(2).strip()
            current = []
            continue
        m = re.match(r"^([^:#=\t][^:=]*?)\s*::?\s*([^=].*)?$", line)
        if m:
            current = m.group(1).split()
            deps = (m.group(2) or "").split(";", 1)
            for t in current:
                rules.setdefault(t, ([], []))[0].extend(deps[0].split())
                if len(deps) > 1:
                    rules[t][1].append(deps[1].strip())
                if not t.startswith(".") and "%" not in t:
                    order.append(t)
        elif line.strip() and not line.lstrip().startswith("#"):
            current = []
    todo = list(targets or order[:1])
    seen: set[str] = set()
    while todo:
        target = todo.pop()
        if target in seen or target not in rules:
            continue
        seen.add(target)
        deps, recipe = rules[target]
        todo.extend(deps)
        for line in recipe:
            expanded = line
            for _ in range(3):  # $(VAR) / ${VAR} from the file; unknown ones stand as their name
                expanded = re.sub(r"\$[({]([A-Za-z_][A-Za-z0-9_]*)[)}]",
                                  lambda v: variables.get(v.group(1), v.group(1).lower()), expanded)
            expanded = re.sub(r"\$[@<^?*]", "target", expanded).replace("$$", "$")
            why = command_hazard(expanded)
            if why is not None:
                return f"the `{target}` recipe: {why}"
    return None

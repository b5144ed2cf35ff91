"""GBNF grammars generated from the protocol definitions, for grammar-constrained local models.

A small model cannot be trusted to follow a prompt; llama.cpp can make it follow a grammar
(GBNF, llama.cpp's grammars/README.md). This module writes the grammars:

- `symops_grammar(spec)`: one Sym-Ops reply (docs/protocols/symops.md) — a `~` thought, a vitals
  line, 0..N actions with only the session's verbs, paths the task and the workspace make
  plausible, run commands of a known shape (`python FILE`, `python -m pytest -q [FILE]`), `---`
  blocks of bounded length whose lines cannot close the block or open a markdown fence, and a
  step marker `~ next: DONE|CONTINUE` (a thought line, so the reply stays strict Sym-Ops).
- `json_string_rule()`: a JSON string with escapes (an inner `"` must be written `\\"`).

JSON replies (the Main decision, the classifier, worker outputs) are constrained by their JSON
schema instead: llama.cpp converts it (`LlamaGrammar.from_json_schema`), Ollama takes it as
`format`, llama.cpp's server as `response_format` (see `duckflow.llm.constrain`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from duckflow.llm.types import ToolSpec
from duckflow.protocols.filenames import plausible_paths as plausible_paths  # re-exported
from duckflow.protocols.schema import schema_types

# the verbs of the single-call reply and the workspace tool each one needs
VERB_TOOLS = {"create": "write_file", "edit": "write_file", "run": "execute_shell",
              "test": "run_tests", "delete": "delete_path", "read": "read_file"}
MARKERS = ("DONE", "CONTINUE")


def literal(text: str) -> str:
    """`text` as a GBNF string literal."""
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def alternatives(items: Iterable[str]) -> str:
    """`"a" | "b"` for the distinct items, longest first (so no item is cut at a shorter one)."""
    uniq = sorted(set(items), key=lambda s: (-len(s), s))
    return " | ".join(literal(i) for i in uniq)


def json_string_rule(name: str = "string") -> str:
    """A JSON string with escapes: without them a grammar ends the string at an inner `"`."""
    return (f'{name} ::= "\\"" ( [^"\\\\\\x7F\\x00-\\x1F] | "\\\\" ( ["\\\\/bfnrt] | '
            f'"u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] ) )* "\\""')


def run_commands(paths: Sequence[str]) -> list[str]:
    """Commands a run can be: `python FILE` for each .py file, pytest for the tests."""
    cmds = [f"python {p}" for p in paths if p.endswith(".py")]
    tests = [p for p in paths if p.endswith(".py") and re.search(r"(^|/)test_[^/]*\.py$|_test\.py$", p)]
    cmds += ["python -m pytest -q"] + [f"python -m pytest -q {t}" for t in tests]
    return cmds


@dataclass
class SymOpsGrammarSpec:
    """What one single-call Sym-Ops reply may contain."""

    verbs: Sequence[str] = ("create", "edit", "run")
    create_paths: Sequence[str] = ()  # files the reply may create (task-named or new)
    existing: Sequence[str] = ()  # files that exist (edit, delete, read)
    commands: Sequence[str] = ()  # exact run commands
    new_names: bool = True  # also allow a new file name of a plain form
    min_actions: int = 1
    max_actions: int = 3
    max_block_lines: int = 150
    thought_chars: int = 200
    vitals: bool = True
    marker: bool = True
    extra: dict[str, str] = field(default_factory=dict)
    # files an `edit` may change with SEARCH/REPLACE hunks, with their text: a SEARCH section
    # can only be a run of consecutive lines of that file (or empty: append at the end)
    edit_files: dict[str, str] = field(default_factory=dict)
    max_hunks: int = 3
    run_args: bool = False  # a run may add up to 4 plain words (`python3 shout.py hey`), no options
    # other tools the reply may call, each `$ NAME @ first argument` on one line (an MCP server's)
    tools: Sequence[str] = ()


def _hunk_rules(n: int, path: str, text: str, max_lines: int, max_hunks: int) -> list[str]:
    """Rules of `$ edit @ path` with hunks whose SEARCH lines are consecutive lines of `text`."""
    lines = text.splitlines()[:400]
    rules = [f"edit{n} ::= \"$ edit @ \" {literal(path)} \"\\n---\\n\" hunk{n}{{1,{max_hunks}}} \"---\\n\"",
             f"hunk{n} ::= \"<<<<<<< SEARCH\\n\" search{n}? \"=======\\n\" bline{{0,{max_lines}}} "
             "\">>>>>>> REPLACE\\n\""]
    usable = [i for i, ln in enumerate(lines) if not _closes_or_marks(ln)]
    if not usable:
        return [rules[0], rules[1].replace(f" search{n}?", "")]
    starts = [f"f{n}x{i}" for i in usable]
    rules.append(f"search{n} ::= {' | '.join(starts)}")
    for i in usable:  # a run starting at line i: that line, then optionally the run from i+1
        nxt = f" f{n}x{i + 1}?" if i + 1 in usable else ""
        rules.append(f"f{n}x{i} ::= {literal(lines[i] + chr(10))}{nxt}")
    return rules


def _short_runs(ch: str, most: int = 4) -> str:
    """GBNF: a line start of 1..`most` `ch` then anything else (so never a run of `most`+1)."""
    return " | ".join(f'"{ch * k}" ( [^{ch}\\n] [^\\n]* )?' for k in range(1, most + 1))


def _closes_or_marks(line: str) -> bool:
    """A file line a SEARCH section cannot hold: it would close the block or look like a marker."""
    s = line.strip()
    return s.startswith("---") and not s.strip("-") or bool(re.match(r"^(<{5,9}|={5,9}|>{5,9})", s))


# a script of a plain new name: when the task names no file, the model names the one it creates
# and must be able to run it (with no run, a small model wrote tests and a runner file instead)
NEWPY = 'newpy ::= [a-z_] [a-z0-9_]{0,30} ( "/" [a-z_] [a-z0-9_]{0,30} )? ".py"'


def _run_targets(commands: Sequence[str], new_names: bool) -> str:
    """The commands a run may name: the listed ones, and `python3 NEWNAME.py` when new names are allowed."""
    return " | ".join(x for x in (alternatives(commands) if commands else "",
                                  '"python3 " newpy' if new_names else "") if x)


def symops_grammar(spec: SymOpsGrammarSpec) -> str:
    """The GBNF grammar of one Sym-Ops reply for `spec`."""
    rules: list[str] = []
    verbs = [v for v in spec.verbs if v in VERB_TOOLS]
    act_rules: list[str] = []
    new_paths = list(dict.fromkeys([*spec.create_paths, *spec.existing]))
    if "create" in verbs and (new_paths or spec.new_names):
        target = " | ".join(x for x in (alternatives(new_paths) if new_paths else "",
                                        "newname" if spec.new_names else "") if x)
        rules.append(f"create ::= \"$ create @ \" ( {target} ) \"\\n\" block")
        act_rules.append("create")
    if "edit" in verbs and spec.edit_files:
        names = []
        for n, (path, text) in enumerate(spec.edit_files.items()):
            rules += _hunk_rules(n, path, text, spec.max_block_lines, spec.max_hunks)
            names.append(f"edit{n}")
        rules.append(f"edit ::= {' | '.join(names)}")
        act_rules.append("edit")
    elif "edit" in verbs and spec.existing:  # the whole new file, or hunks with their markers
        rules.append(f"edit ::= \"$ edit @ \" ( {alternatives(spec.existing)} ) \"\\n\" eblock")
        rules.append(f"eblock ::= \"---\\n\" ( bline | emark ){{0,{spec.max_block_lines}}} \"---\\n\"")
        rules.append('emark ::= ( "<<<<<" [^\\n]* | "=====" [^\\n]* | ">>>>>" [^\\n]* ) "\\n"')
        act_rules.append("edit")
    if "run" in verbs and (spec.commands or spec.new_names):
        args = " runargs?" if spec.run_args else ""
        rules.append(f"run ::= \"$ run @ \" ( {_run_targets(spec.commands, spec.new_names)} ){args} \"\\n\"")
        if spec.run_args:  # plain words only: no quote, `;`, `|`, `&`, `$`, `>` or backtick reaches the shell
            # and no option (`--basetemp=src`, `-o x`), absolute path, `..` or dot-name: each
            # `/`-separated part starts with a letter, digit or `_`
            rules.append('runargs ::= ( " " argpart ( "/" argpart ){0,3} ){1,4}')
            rules.append("argpart ::= [A-Za-z0-9_] [A-Za-z0-9_.,=+-]{0,29}")
        act_rules.append("run")
    for verb in ("delete", "read"):
        if verb in verbs and spec.existing:
            rules.append(f"{verb} ::= \"$ {verb} @ \" ( {alternatives(spec.existing)} ) \"\\n\"")
            act_rules.append(verb)
    if spec.tools:
        rules.append(f"tool ::= \"$ \" ( {alternatives(spec.tools)} ) \" @ \" [^\\n]{{1,200}} \"\\n\"")
        act_rules.append("tool")
    if not act_rules:
        raise ValueError("no action is possible with these verbs and paths")
    lo, hi = max(0, spec.min_actions), max(spec.min_actions, spec.max_actions, 1)
    head = [f"thought ::= \"~ \" tchar{{1,{spec.thought_chars}}} \"\\n\"",
            'tchar ::= [^\\n]']
    root = ["thought"]
    if spec.vitals:
        head.append('vitals ::= "#c" num " #m" num " #f" num " #s" num "\\n"')
        head.append('num ::= "0." [0-9] | "1.0"')
        root.append("vitals")
    root.append(f"action{{{lo},{hi}}}")
    if spec.marker:
        head.append(f"marker ::= \"~ next: \" ( {alternatives(MARKERS)} ) \"\\n\"")
        root.append("marker")
    block = [
        f"block ::= \"---\\n\" bline{{0,{spec.max_block_lines}}} \"---\\n\"",
        # a content line: never exactly `---` (it would close the block, also with blanks after
        # it), never a ``` fence, never an edit marker (5+ `<`, `=` or `>`: a pasted example)
        "bline ::= ( [^-`<=>\\n] [^\\n]* | " + " | ".join(_short_runs(c) for c in "<=>") + ' | "-" ( [^-\\n] [^\\n]* )? '
        '| "--" ( [^-\\n] [^\\n]* )? | "---" [ \\t]* [^ \\t\\n] [^\\n]* | "`" ( [^`\\n] [^\\n]* )? ) "\\n"',
    ]
    if spec.new_names:
        block.append('newname ::= [a-z_] [a-z0-9_]{0,30} ( "/" [a-z_] [a-z0-9_]{0,30} )? '
                     '"." ( "py" | "txt" | "md" | "json" | "csv" | "toml" )')
        block.append(NEWPY)
    lines = [f"root ::= {' '.join(root)}", f"action ::= {' | '.join(act_rules)}", *head, *rules, *block]
    lines += [f"{k} ::= {v}" for k, v in spec.extra.items()]
    return "\n".join(lines) + "\n"


# -- DML (docs/protocols/dml.md) ---------------------------------------------------------------
DML_OPEN, DML_CLOSE = "\U0001f986\u25b6\ufe0f[", "]\u25c0\ufe0f\U0001f986"
DML_MARKER = "Next: "
_DUCK = "\\U0001F986"  # the duck is in both delimiters: text without it can neither open nor close a macro
_PATHLIKE = re.compile(r"(^|_)(path|src|dst|file|dir|directory|source|destination|target)$")
CREATING = {"write_file", "create_directory"}  # their path may be a new file; other tools need an existing one


@dataclass
class DmlGrammarSpec:
    """What one DML reply (Thought, Action and T macros, a step marker) may contain."""

    tools: Sequence[ToolSpec] = ()  # the session's tools the reply may call (required parameters only)
    create_paths: Sequence[str] = ()  # files a creating tool may name (task-named or new)
    existing: Sequence[str] = ()  # files that exist (the other path parameters)
    commands: Sequence[str] = ()  # exact commands for a `command` parameter
    aliases: Sequence[tuple[str, str]] = ()  # (alias, path) the session's DML codec knows: `{{F:alias}}`
    new_names: bool = True
    min_actions: int = 1
    max_actions: int = 3
    max_block_lines: int = 150
    thought_chars: int = 200
    marker: bool = True


def _text_rules() -> list[str]:
    """A text character that cannot start a macro, a reasoning tag (`<think>`, `</think>`,
    `<reasoning>`: the reader skips what they enclose) or an alias reference (`{{F:x}}`)."""
    plain = f"[^\\n{_DUCK}<{{]"

    def but(extra: str) -> str:
        return f"[^\\n{_DUCK}<{{{extra}]"

    after = f'( {but("tTrR/")} | [tT] {but("hH")} | [rR] {but("eE")} )'
    return [
        f'dchar ::= {plain} | "<" ( {after} | "/" {after} ) | "{{" {but("")}',
        'dline ::= dchar* ( "<" | "{" )? "\\n"',
    ]


def _param_rule(spec: ToolSpec, pname: str, paths: dict[str, str], commands: str) -> str | None:
    """The GBNF of one required parameter, or None when nothing plausible can fill it."""
    kinds = schema_types(spec.parameters.get("properties", {}).get(pname, {}))
    if _PATHLIKE.search(pname):
        return paths["new" if spec.name in CREATING or pname == "dst" else "old"] or None
    if pname == "command":
        return commands or None
    if "string" in kinds:
        # the tool's last parameter takes the rest of the macro: content on its own lines
        return "dblock" if pname == spec.param_names[-1] else "dword"
    if "boolean" in kinds:
        return '( "true" | "false" )'
    if "integer" in kinds or "number" in kinds:
        return "[0-9]{1,6}"
    return None


def dml_grammar(spec: DmlGrammarSpec) -> str:
    """The GBNF grammar of one DML reply for `spec`; what it yields, `DMLCodec.decode` reads strictly.

    `Thought: ONE LINE`, `Action:`, 0..N T macros of the spec's tools with only their required
    parameters (paths from the task and workspace or `{{F:alias}}` of the codec's table,
    commands from a list, content on its own lines, bounded), and `Next: DONE|CONTINUE`. DML
    has no escapes: text can hold `|` (the last parameter takes the rest) but never the duck
    of the delimiters, so the grammar leaves it out.
    """
    refs = [f"{{{{F:{a}}}}}" for a, p in spec.aliases]
    alias_of = {p: f"{{{{F:{a}}}}}" for a, p in spec.aliases}
    old = list(dict.fromkeys([*spec.existing, *(alias_of[p] for p in spec.existing if p in alias_of)]))
    new = list(dict.fromkeys([*spec.create_paths, *spec.existing, *refs]))
    paths = {"old": f"( {alternatives(old)} )" if old else "",
             "new": " | ".join(x for x in (f"( {alternatives(new)} )" if new else "",
                                           "newname" if spec.new_names else "") if x)}
    if paths["new"]:
        paths["new"] = f"( {paths['new']} )"
    commands = f"( {_run_targets(spec.commands, spec.new_names)} )" if spec.commands or spec.new_names else ""
    rules: list[str] = []
    acts: list[str] = []
    for tool in spec.tools:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", tool.name):
            continue
        names = [p for p in tool.param_names if p in tool.required]
        parts = [_param_rule(tool, p, paths, commands) for p in names]
        if any(x is None for x in parts):
            continue
        body = "".join(f' "|" {x}' for x in parts)
        name = f"t-{tool.name.replace('_', '-')}"
        rules.append(f"{name} ::= {literal(DML_OPEN + 'T:' + tool.name)}{body} {literal(DML_CLOSE)} \"\\n\"")
        acts.append(name)
    if not acts:
        raise ValueError("no tool can be called with these tools, paths and commands")
    lo, hi = max(0, spec.min_actions), max(spec.min_actions, spec.max_actions, 1)
    root = ['"Thought: "', f"dchar{{1,{spec.thought_chars}}}", '"\\nAction:\\n"', f"action{{{lo},{hi}}}"]
    lines = [f"action ::= {' | '.join(acts)}", *rules, *_text_rules(),
             # content starts on its own line (one newline is dropped by the reader), ends at a line
             f"dblock ::= \"\\n\" dline{{1,{spec.max_block_lines}}}",
             # one line of text between pipes: starts and ends with a visible character (the reader strips)
             'dword ::= wchar ( [^|\\n\\U0001F986<{]{0,78} wchar )?',
             "wchar ::= [A-Za-z0-9_.()'/-]"]
    if spec.marker:
        root.append("marker")
        lines.append(f"marker ::= {literal(DML_MARKER)} ( {alternatives(MARKERS)} ) \"\\n\"")
    if spec.new_names:
        lines.append('newname ::= [a-z_] [a-z0-9_]{0,30} ( "/" [a-z_] [a-z0-9_]{0,30} )? '
                     '"." ( "py" | "txt" | "md" | "json" | "csv" | "toml" )')
        lines.append(NEWPY)
    return "\n".join([f"root ::= {' '.join(root)}", *lines]) + "\n"

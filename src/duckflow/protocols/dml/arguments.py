"""DML arguments: split a T macro's text with the tool's signature, convert to declared types.

Types come from the tool's real JSON schema (`type`, type lists, `anyOf`/`oneOf` as pydantic
writes Optional parameters). The last parameter taken takes the rest, pipes included; trailing
parameters are dropped until every piece fits its declared type (a number cannot take
`wc -l`, so `execute_shell|cat a.txt | wc -l` keeps its pipe); a parameter named like a path
never absorbs pipes. Named (`path=a.py`), quoted-path and JSON-object arguments are undone.
"""

from __future__ import annotations

import json
import re
from typing import Any

from duckflow.llm.types import ToolSpec
from duckflow.protocols.schema import schema_types as schema_types  # re-exported


def _content(arg: str) -> str:
    """The last argument keeps its content: only the spaces after `|` and one newline go."""
    arg = arg.lstrip(" \t")
    if arg.startswith("\r\n"):
        arg = arg[2:]
    elif arg.startswith("\n"):
        arg = arg[1:]
    return arg.rstrip(" \t")


# A parameter that names a path never absorbs the pipes of the parameters after it.
_PATHLIKE = re.compile(r"(^|_)(path|src|dst|file|dir|directory|source|destination|target)$")


def _split(rest: str, k: int, params: list[str] | None = None) -> list[str]:
    parts = rest.split("|", k - 1) if k > 0 else rest.split("|")
    out = [p.strip() for p in parts]
    name = params[len(parts) - 1] if params and len(parts) <= len(params) else None
    text_param = name is not None and not _PATHLIKE.search(name)
    own_lines = parts[-1].lstrip(" \t").startswith(("\n", "\r\n"))
    if "\n" in out[-1] or (text_param and own_lines):
        out[-1] = _content(parts[-1])  # content on its own lines: keep indentation, final newline
    return out


def _split_typed(rest: str, k: int, params: list[str], props: dict[str, Any]) -> list[str]:
    """`rest` in `k` pieces; the last *string* parameter takes the rest of the text.

    `execute_shell|cat a | wc -l|30`: the typed `timeout` after `command` takes only the last
    piece, so the command keeps its pipe. When the k-th parameter is itself a string (or
    none of them is) this is the plain split, the last piece taking the rest.
    """
    strings = [i for i in range(k) if "string" in schema_types(props.get(params[i], {}))]
    j = strings[-1] if strings else k - 1
    if j == k - 1 or rest.count("|") < k - 1:
        return _split(rest, k, params)
    head = rest.split("|", j)
    tail = head[-1].rsplit("|", k - 1 - j)
    out = [p.strip() for p in head[:-1] + tail]
    if "\n" in tail[0]:
        out[j] = _content(tail[0])
    return out


def _fits(args: list[str], spec: ToolSpec) -> bool:
    props = spec.parameters.get("properties", {})
    for name, value in zip(spec.param_names, args, strict=False):
        try:
            convert(value, props.get(name, {}))
        except ValueError:
            return False
    return True


def split_args(rest: str | None, spec: ToolSpec | None) -> list[str]:
    """Arguments of a T macro after the tool name, split with the tool's signature.

    The last parameter takes the rest, pipes included. When trailing optional parameters are
    typed (`execute_shell|ls | wc -l` with an optional numeric `timeout`), fewer parameters
    are tried until every piece fits its declared type, so the pipe stays in the command.
    """
    if rest is None:
        return []
    if spec is None:
        return _split(rest, 0)
    params = spec.param_names
    if not params:
        return [_split(rest, 1)[0]]
    floor = max(len(spec.required), 1)
    props = spec.parameters.get("properties", {})
    for k in range(len(params), floor - 1, -1):
        pieces = _split_typed(rest, k, params, props)
        args = _tidy_args(pieces, params)
        if _fits(args, spec) and (k == len(params) or not _PATHLIKE.search(params[k - 1])):
            return args
    return _tidy_args(_split(rest, len(params), params), params)


_QUOTED = re.compile(r"""^(["'`])([^"'`\n]+)\1$""")


def _tidy_args(args: list[str], params: list[str]) -> list[str]:
    """Undo two habits of models: `path=src/a.py` (the parameter's own name) and quoted paths."""
    out = []
    for value, name in zip(args, params, strict=False):
        m = re.match(rf"{re.escape(name)}[ \t]*[=:][ \t]*", value)
        if m and "\n" not in value:  # multi-line content is text: `content = 1` is its first line
            value = value[m.end() :]
        q = _QUOTED.match(value)
        if q and _PATHLIKE.search(name):
            value = q.group(2)
        out.append(value)
    return out + args[len(out) :]


_TRUE = {"true", "yes", "on", "1", "はい"}
_FALSE = {"false", "no", "off", "0", "いいえ"}


_NULL = {"null", "none", ""}


def convert(value: str, schema: dict[str, Any]) -> Any:
    """`value` as the parameter's declared type; ValueError when it is none of the accepted types."""
    kinds = schema_types(schema)
    if "string" in kinds:
        return value  # a text parameter takes any text (a number written there stays text)
    if "null" in kinds and value.strip().lower() in _NULL:
        return None
    real = [k for k in kinds if k != "null"] or kinds
    for kind in real:
        try:
            return _convert_one(value, kind)
        except ValueError as err:
            if len(real) == 1:
                raise ValueError(str(err) if kind == "boolean" else f"expected {kind}") from None
    raise ValueError(f"expected {' or '.join(real)}")


def _convert_one(value: str, kind: str) -> Any:
    low = value.strip().lower()
    if kind == "boolean":
        if low in _TRUE or low in _FALSE:
            return low in _TRUE
        raise ValueError("expected true or false")
    if kind == "integer":
        return int(low)
    if kind == "number":
        number = float(low)
        return int(number) if number.is_integer() and "." not in low and "e" not in low else number
    if kind in ("array", "object"):
        parsed = json.loads(value)
        if not isinstance(parsed, list if kind == "array" else dict):
            raise ValueError(f"expected a JSON {kind}")
        return parsed
    if kind == "null":
        if low in _NULL:
            return None
        raise ValueError("expected null")
    return value


def json_arguments(rest: str | None, spec: ToolSpec | None) -> dict[str, Any] | None:
    """`{"path": "a.py"}` written instead of `a.py`: the arguments by name, when unambiguous."""
    if rest is None or spec is None or not rest.strip().startswith("{") or not rest.strip().endswith("}"):
        return None
    try:
        value = json.loads(rest)
    except ValueError:
        return None
    params = set(spec.param_names)
    if not isinstance(value, dict) or not value or not set(value) <= params or not set(spec.required) <= set(value):
        return None
    props = spec.parameters.get("properties", {})
    out: dict[str, Any] = {}
    for key, v in value.items():
        try:
            out[key] = convert(v, props.get(key, {})) if isinstance(v, str) else v
        except ValueError:
            return None
    return out

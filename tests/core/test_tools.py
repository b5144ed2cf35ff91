"""Tools: schema from signature and docstring, validation before the call, context injection."""

from __future__ import annotations

import asyncio
import threading

import pytest
from pydantic import BaseModel

from duckflow.core.errors import ToolValidationError
from duckflow.core.tools import Tool, ToolContext, as_tool, result_to_text, tool


@tool
def read_file(path: str, limit: int = 10, ctx: ToolContext | None = None) -> str:
    """Read a file from the workspace.

    Args:
        path: The file to read,
            relative to the root.
        limit (int): How many lines.
    """
    assert ctx is not None
    return f"{path}:{limit}:{ctx.session_id}:{ctx.extra_cfg.get('db')}"


def numpy_style(text: str, times: int) -> str:
    """Repeat text.

    Parameters
    ----------
    text : str
        What to repeat.
    times : int
        How often.

    Returns
    -------
    str
    """
    return text * times


def test_schema_comes_from_signature_and_google_docstring() -> None:
    spec = read_file.spec
    assert spec.name == "read_file"
    assert spec.description == "Read a file from the workspace."
    props = spec.parameters["properties"]
    assert list(props) == ["path", "limit"]  # the ToolContext parameter is not in the schema
    assert props["path"]["description"] == "The file to read, relative to the root."
    assert props["limit"]["description"] == "How many lines."
    assert spec.parameters["required"] == ["path"]


def test_numpy_docstring_descriptions() -> None:
    t = Tool.from_function(numpy_style)
    props = t.spec.parameters["properties"]
    assert props["text"]["description"] == "What to repeat."
    assert props["times"]["description"] == "How often."
    assert t.description == "Repeat text."


async def test_context_is_injected_and_sync_function_runs_in_executor() -> None:
    seen: list[str] = []

    def where() -> str:
        seen.append(threading.current_thread().name)
        return "ok"

    ctx = ToolContext("s1", "agent", {"db": "conn"})
    assert await read_file.invoke({"path": "a.py"}, ctx) == "a.py:10:s1:conn"
    assert await as_tool(where).invoke({}) == "ok"
    assert seen and seen[0] != threading.main_thread().name


async def test_bad_arguments_raise_validation_error_naming_the_field_without_calling() -> None:
    calls: list[int] = []

    def count(n: int) -> int:
        calls.append(n)
        return n

    t = as_tool(count)
    with pytest.raises(ToolValidationError) as err:
        await t.invoke({"n": "not a number"})
    assert "'n'" in str(err.value) and err.value.fields == ["n"] and err.value.tool == "count"
    with pytest.raises(ToolValidationError) as err2:
        await t.invoke({"n": 1, "extra": 2})
    assert "extra" in err2.value.fields
    with pytest.raises(ToolValidationError):
        await t.invoke({})
    assert calls == []


async def test_explicit_args_model_and_exclusive_flag() -> None:
    class Query(BaseModel):
        q: str
        k: int = 3

    async def search(args: Query) -> list[str]:
        await asyncio.sleep(0)
        return [args.q] * args.k

    t = Tool.from_function(search, args_model=Query, exclusive=True, description="Search.")
    assert t.exclusive and t.spec.parameters["properties"]["k"]["default"] == 3
    assert await t.invoke({"q": "x", "k": 2}) == ["x", "x"]


def test_tool_is_immutable_and_decorator_options() -> None:
    @tool(name="renamed", exclusive=True)
    def f(x: str) -> str:
        return x

    assert f.name == "renamed" and f.exclusive
    with pytest.raises(AttributeError):
        f.name = "other"  # type: ignore[misc]


def test_field_names_that_shadow_pydantic_attributes_still_work() -> None:
    def dump(json: str, schema: str = "s") -> str:
        return json + schema

    t = as_tool(dump)
    assert list(t.spec.parameters["properties"]) == ["json", "schema"]
    assert asyncio.run(t.invoke({"json": "a"})) == "as"


def test_result_to_text() -> None:
    class R(BaseModel):
        a: int

    assert result_to_text("x") == "x"
    assert result_to_text({"a": [1]}) == '{"a": [1]}'
    assert result_to_text(R(a=1)) == '{"a":1}'


async def test_callable_objects_and_bound_methods() -> None:
    class Counter:
        async def __call__(self, n: int) -> int:
            """Count one up.

            Args:
                n: The start.
            """
            return n + 1

    class Shelf:
        def take(self, item: str) -> str:
            return item * 2

    counter = Tool.from_function(Counter(), name="count")
    assert counter.is_async and counter.description == "Count one up."
    assert counter.spec.parameters["properties"]["n"]["description"] == "The start."
    assert await counter.invoke({"n": 1}) == 2
    take = as_tool(Shelf().take)
    assert list(take.spec.parameters["properties"]) == ["item"]
    assert await take.invoke({"item": "a"}) == "aa"

"""Tools: immutable wrappers around functions, with a pydantic model of their arguments.

`Tool.from_function(fn)` (or the `@tool` decorator) reads the signature and the docstring
(Google or NumPy style) into an arguments model; `await tool.invoke(args, ctx)` validates the
arguments first (`ToolValidationError` naming the field, the function is not called), then
awaits async functions or runs sync ones (see `Tool` for where). A parameter annotated
`ToolContext` receives the call's context and is not part of the schema.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import functools
import inspect
import json
import sys
import time
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar, overload

from duckflow.core.errors import ToolValidationError
from duckflow.core.pacing import Pace, thread_usage, timed
from duckflow.toolkinds import READ_KINDS

if TYPE_CHECKING:
    from pydantic import BaseModel

    from duckflow.llm.types import ToolSpec

# pydantic's models are imported where a tool is first made or called, not here: defining the
# first model class imports pydantic.main, which would double the cost of `from duckflow import tool`

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True, eq=False)
class ToolContext:
    """What a tool may learn about the call: the session, the calling agent, injected config.

    `extra_cfg` is the agent's `extra_cfg` (a DB connection, a workspace ...). `run` is the
    engine's handle on the current run (used by handoffs); tools normally ignore it.
    `approval` is the gate's answer to this call when it passed one.
    """

    session_id: str = ""
    agent: str = ""
    extra_cfg: Mapping[str, Any] = field(default_factory=dict)
    run: Any = field(default=None, repr=False)
    approval: Approval | None = None


@dataclass(frozen=True)
class Approval:
    """The gate's answer to one call, as the tool receives it (`ToolContext.approval`).

    `granted`: the call was approved (by a person, or automatically within a scope); `by`: who
    answered, `person:...` or `auto:...` ("" when not said); `readonly`: files an auto-approved
    command may not change (the sandbox binds them read-only); `staging`: the folder an
    auto-approved command's writes go to instead of the workspace (it runs in a box)."""

    granted: bool = False
    by: str = ""
    readonly: tuple[str, ...] = ()
    staging: str = ""

    @property
    def by_person(self) -> bool:
        """A person said yes: only this unlocks what needs a person (never an auto-approval)."""
        return self.granted and not self.by.startswith("auto:")


@functools.cache
def _args_base() -> type[BaseModel]:
    """The base of every generated arguments model (defined on first use, see above)."""
    from pydantic import BaseModel, ConfigDict

    class _ArgsBase(BaseModel):
        model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    return _ArgsBase


@dataclass(frozen=True, eq=False)
class Tool:
    """One tool: name, description, arguments model, the function, and whether it runs alone.

    `exclusive=True` tools never run concurrently with other calls of the same turn.
    `timeout_s` bounds one call in an agent run (the model is told it timed out).
    `params` maps model field names to the function's parameter names; `instance_param`
    is set when the function takes the whole arguments model as one parameter.

    Where a sync function runs (`blocking`): True, always in a worker thread of the default
    executor; False, always on the event loop's thread; None (the default), adaptive: in a
    worker thread until its own run time stayed under `INLINE_LIMIT_S` on `INLINE_AFTER`
    threaded calls in a row, then on the loop's thread, until one call there takes longer (not
    because the OS preempted it): then in a thread for good (`core/pacing.py`). A thread hop
    costs 0.1-0.2 ms of wake-ups on an idle machine, 20-40x a small pure function; the rule
    bounds how long an unknown tool can ever hold the loop to one call over the limit. A tool
    with `timeout_s` always runs in a thread (a timeout cannot stop a function on the loop's
    thread). Either way the call runs in a copy of the caller's context variables.
    """

    name: str
    description: str
    args_model: type[BaseModel]
    fn: Callable[..., Any]
    exclusive: bool = False
    context_param: str | None = None
    params: Mapping[str, str] = field(default_factory=dict)
    instance_param: str | None = None
    is_async: bool = False
    timeout_s: float | None = None
    blocking: bool | None = None
    # what the tool does, said where it is defined (read | list | search | write | edit | mkdir |
    # delete | rename | execute | test); "other" when the definer did not say: it needs approval
    kind: str = "other"
    _pace: Pace = field(default_factory=Pace, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.blocking is False and self.timeout_s is not None:
            from duckflow.errors import UserError

            raise UserError(f"tool '{self.name}' has blocking=False and timeout_s={self.timeout_s}: "
                            "a timeout needs the tool to run in a worker thread",
                            hint="drop blocking=False (or the timeout)")
        if self.blocking is False and not self.is_async:
            self._pace.inline = True

    @property
    def needs_approval(self) -> bool:
        """Whether a call must pass the approval gate (anything but reading)."""
        return self.kind not in READ_KINDS

    @property
    def runs_inline(self) -> bool:
        """Whether the next call of this sync tool runs on the event loop's thread."""
        return self._pace.inline and not self.is_async

    @cached_property
    def json_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments (titles removed, as models are told)."""
        schema = self.args_model.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            if isinstance(prop, dict):
                prop.pop("title", None)
        schema.setdefault("properties", {})
        return schema

    @cached_property
    def spec(self) -> ToolSpec:
        from duckflow.llm.types import ToolSpec

        return ToolSpec(self.name, self.description, self.json_schema)

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        exclusive: bool = False,
        args_model: type[BaseModel] | None = None,
        timeout_s: float | None = None,
        blocking: bool | None = None,
        kind: str = "other",
    ) -> Tool:
        """Wrap `fn`; its signature and docstring become the arguments model and description.

        `blocking`: where a sync `fn` runs (see `Tool`): True a worker thread, False the event
        loop's thread, None (default) adaptive."""
        from pydantic import BaseModel, Field, create_model

        from duckflow.core.docstrings import parse_docstring

        raw_doc = inspect.getdoc(fn)
        if not raw_doc and not (inspect.isfunction(fn) or inspect.ismethod(fn)):
            raw_doc = inspect.getdoc(type(fn).__call__)  # a callable object: its __call__'s doc
        doc = parse_docstring(raw_doc)
        tool_name = name or getattr(fn, "__name__", None) or type(fn).__name__
        sig = inspect.signature(fn)
        hints = _type_hints(fn)
        context_param: str | None = None
        instance_param: str | None = None
        fields: dict[str, Any] = {}
        params: dict[str, str] = {}
        for pname, param in sig.parameters.items():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue
            annotation = hints.get(pname, param.annotation)
            if _is_context(annotation):
                context_param = pname
                continue
            if args_model is not None:
                if annotation is args_model or annotation == args_model.__name__ or (
                    pname not in args_model.model_fields and param.default is param.empty
                ):
                    instance_param = pname
                continue
            if annotation is inspect.Parameter.empty:
                annotation = Any
            default = ... if param.default is inspect.Parameter.empty else param.default
            field_name = pname if not hasattr(BaseModel, pname) else f"{pname}_"
            info = Field(default, description=doc.params.get(pname) or None,
                         alias=pname if field_name != pname else None)
            fields[field_name] = (annotation, info)
            params[field_name] = pname
        if args_model is None:
            model_name = "".join(p.title() for p in tool_name.split("_")) + "Args"
            args_model = create_model(model_name, __base__=_args_base(), **fields)
        else:
            params = {} if instance_param else {f: f for f in args_model.model_fields}
        is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            type(fn).__call__)
        return cls(
            name=tool_name,
            description=description if description is not None else doc.summary,
            args_model=args_model,
            fn=fn,
            exclusive=exclusive,
            kind=kind,
            context_param=context_param,
            params=params,
            instance_param=instance_param,
            is_async=is_async,
            timeout_s=timeout_s,
            blocking=blocking,
        )

    def validate(self, arguments: Mapping[str, Any] | None) -> BaseModel:
        """Check arguments against the model; `ToolValidationError` names each bad field."""
        try:
            return self.args_model.model_validate(dict(arguments or {}))
        except Exception as exc:
            from pydantic import ValidationError  # here, not per call: a call pays no import

            if not isinstance(exc, ValidationError):
                raise
            problems = []
            fields = []
            for err in exc.errors():
                loc = ".".join(str(part) for part in err["loc"]) or "(arguments)"
                fields.append(loc)
                problems.append(f"'{loc}': {err['msg']}")
            expected = ", ".join(self.json_schema.get("properties", {})) or "no arguments"
            raise ToolValidationError(
                f"invalid arguments for tool '{self.name}': " + "; ".join(problems),
                tool=self.name,
                fields=fields,
                hint=f"call {self.name} with: {expected}",
            ) from None

    async def invoke(self, arguments: Mapping[str, Any] | None, ctx: ToolContext | None = None) -> Any:
        """Validate `arguments`, then run the function (a sync one where `blocking` says)."""
        parsed = self.validate(arguments)
        if self.instance_param:
            kwargs: dict[str, Any] = {self.instance_param: parsed}
        else:
            values = parsed.__dict__
            kwargs = {pname: values[fname] for fname, pname in self.params.items()}
        if self.context_param:
            kwargs[self.context_param] = ctx if ctx is not None else ToolContext()
        if self.is_async:
            return await self.fn(**kwargs)
        pace = self._pace
        if pace.inline:
            adaptive = self.blocking is None
            before = thread_usage() if adaptive else None
            # the function sees no running loop, as in a worker thread: asyncio.run() in it works,
            # asyncio.get_running_loop() fails the same way threaded or inline
            loop = asyncio.events._get_running_loop()
            asyncio.events._set_running_loop(None)
            started = time.perf_counter()
            try:
                result = contextvars.copy_context().run(self.fn, **kwargs)
            finally:
                asyncio.events._set_running_loop(loop)
                if adaptive:
                    pace.inline_call(self.name, time.perf_counter() - started, before)
        else:
            run = contextvars.copy_context().run
            if self.blocking is None and self.timeout_s is None and not pace.demoted:
                call = functools.partial(timed, pace, run, self.fn, kwargs)
            else:
                call = functools.partial(run, self.fn, **kwargs)
            result = await asyncio.get_running_loop().run_in_executor(None, call)
        if inspect.isawaitable(result):
            result = await result
        return result

    async def __call__(self, **arguments: Any) -> Any:
        return await self.invoke(arguments)


def _is_context(annotation: Any) -> bool:
    if annotation is ToolContext:
        return True
    if isinstance(annotation, str):
        return "ToolContext" in annotation
    return any(arg is ToolContext for arg in typing.get_args(annotation))


def _type_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    target = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else type(fn).__call__
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception:  # unresolved forward references: fall back to raw annotations
        return dict(getattr(target, "__annotations__", {}))


@overload
def tool(fn: F, /) -> Tool: ...


@overload
def tool(
    *, name: str | None = None, description: str | None = None, exclusive: bool = False,
    args_model: type[BaseModel] | None = None, timeout_s: float | None = None,
    blocking: bool | None = None, kind: str = "other",
) -> Callable[[F], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    exclusive: bool = False,
    args_model: type[BaseModel] | None = None,
    timeout_s: float | None = None,
    blocking: bool | None = None,
    kind: str = "other",
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Decorator: `@tool` or `@tool(name=..., exclusive=True, blocking=True, kind="read")` turns a
    function into a Tool. `kind` says what it does (read | list | search | write | edit | mkdir |
    delete | rename | execute | test); anything but reading needs approval where a run asks."""

    def wrap(f: Callable[..., Any]) -> Tool:
        return Tool.from_function(f, name=name, description=description, exclusive=exclusive,
                                  args_model=args_model, timeout_s=timeout_s, blocking=blocking, kind=kind)

    return wrap(fn) if fn is not None else wrap


def as_tool(obj: Tool | Callable[..., Any]) -> Tool:
    """A Tool as is; a plain function wrapped with `Tool.from_function`."""
    if isinstance(obj, Tool):
        return obj
    if callable(obj):
        return Tool.from_function(obj)
    raise TypeError(f"not a tool or a function: {obj!r}")


def result_to_text(value: Any) -> str:
    """How a tool's return value is shown to the model: text as is, everything else as JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    pydantic_main = sys.modules.get("pydantic.main")  # loaded if `value` can be a model at all
    if pydantic_main is not None and isinstance(value, pydantic_main.BaseModel):
        return str(value.model_dump_json())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)

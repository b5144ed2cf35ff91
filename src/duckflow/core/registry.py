"""ToolRegistry: the tools an agent or application knows, with an LRU cache of loaded tools.

Tools are registered directly or found through plugins (entry points, imported on first use,
so an application can list hundreds of tools without importing them). `load(name)` loads a
tool and caches it as `LoadedTool(tool, schema_json)` (LRU, 256 entries by default; seed 004
§3-2). Every `Agent` keeps its tools in one, and a registry is a read-only mapping name → Tool.
It renders nothing for the wire: each provider has the one renderer of its format
(`llm/wire.py`), fed from `specs()`.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from duckflow.core.errors import ToolNotFoundError
from duckflow.core.tools import Tool, as_tool
from duckflow.errors import UserError

if TYPE_CHECKING:  # plugins (importlib.metadata) and llm.types are imported where first used
    from importlib.metadata import EntryPoint

    from duckflow.llm.types import ToolSpec


class LoadedTool(NamedTuple):
    tool: Tool
    schema_json: str


class ToolRegistry(Mapping[str, Tool]):
    """Name → tool source (a Tool, or a plugin entry point), with loaded tools in an LRU cache.

    As a mapping, `registry[name]` / `registry.get(name)` load the tool (None when unknown).
    """

    def __init__(self, tools: Iterable[Tool | Callable[..., Any]] = (), *, cache_size: int = 256,
                 plugins: bool = False) -> None:
        self.cache_size = cache_size
        self._sources: dict[str, Tool | EntryPoint] = {}
        self._cache: OrderedDict[str, LoadedTool] = OrderedDict()
        self.loads = 0  # how many times a tool was loaded into the cache (for tests and stats)
        for t in tools:
            self.register(t)
        if plugins:
            self.discover_plugins()

    def register(self, item: Tool | Callable[..., Any], *, replace: bool = False) -> Tool:
        t = as_tool(item)
        if t.name in self._sources and not replace:
            raise UserError(f"a tool named '{t.name}' is already registered",
                            hint="give one of them another name (Tool.from_function(fn, name=...)), "
                                 "or pass replace=True")
        self._sources[t.name] = t
        self._cache.pop(t.name, None)
        return t

    def discover_plugins(self) -> list[str]:
        """Add the tools of installed plugins (group `duckflow.tools`) without importing them."""
        from duckflow.core.plugins import declared_tools, tool_entry_points

        added = []
        for name, t in declared_tools().items():  # loaded at start from the config
            if name not in self._sources:
                self._sources[name] = t
                added.append(name)
        for name, ep in tool_entry_points().items():
            if name not in self._sources:
                self._sources[name] = ep
                added.append(name)
        return added

    def names(self) -> list[str]:
        return list(self._sources)

    def __contains__(self, name: object) -> bool:
        return name in self._sources

    def __len__(self) -> int:
        return len(self._sources)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._sources))

    def __getitem__(self, name: str) -> Tool:
        if name not in self._sources:
            raise KeyError(name)
        return self.load(name).tool

    def load(self, name: str) -> LoadedTool:
        """The tool and its JSON schema, from the cache or freshly loaded (LRU)."""
        hit = self._cache.get(name)
        if hit is not None:
            self._cache.move_to_end(name)
            return hit
        source = self._sources.get(name)
        if source is None:
            raise ToolNotFoundError(f"no tool named '{name}'",
                                    hint="registered: " + (", ".join(sorted(self._sources)) or "none"))
        if isinstance(source, Tool):
            tool = source
        else:
            from duckflow.core.plugins import tools_from_entry_point

            provided = {t.name: t for t in tools_from_entry_point(source)}
            tool = provided.get(name) or next(iter(provided.values()))
        loaded = LoadedTool(tool, json.dumps(tool.json_schema, ensure_ascii=False, sort_keys=True))
        self.loads += 1
        self._cache[name] = loaded
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return loaded

    def tools(self, names: Sequence[str] | None = None) -> list[Tool]:
        """The tools named (all by default); an unknown name raises ToolNotFoundError."""
        return [self.load(n).tool for n in (names if names is not None else self.names())]

    def specs(self, names: Sequence[str] | None = None) -> list[ToolSpec]:
        return [t.spec for t in self.tools(names)]

    def cached(self) -> list[str]:
        """Names in the cache, least recently used first."""
        return list(self._cache)

    def get_prompt_stub(self, names: Sequence[str] | None = None) -> str:
        """Stubs for a text prompt: one `"name": {schema}` line per tool, with its description."""
        lines = []
        for n in names if names is not None else self.names():
            loaded = self.load(n)
            lines.append(f"# {loaded.tool.description}".rstrip() if loaded.tool.description else "")
            lines.append(f'"{n}": {loaded.schema_json}')
        return "\n".join(line for line in lines if line)

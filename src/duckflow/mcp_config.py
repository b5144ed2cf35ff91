"""The `[mcp_servers.NAME]` config section: Model Context Protocol servers whose tools Duckflow uses.

The shape is the one Codex CLI uses in its config.toml (`command`/`args`/`env` for a server run
over stdio, `url` with headers for a streamable HTTP one, `startup_timeout_sec`,
`tool_timeout_sec`, `enabled`, `enabled_tools`/`disabled_tools`), so a block can be copied
between the two. Duckflow adds `kinds` (a tool's kind said by you: "read" runs unasked,
"change" asks) and `max_output_chars`. `.mcp.json` (Claude Code's project file:
`{"mcpServers": {NAME: {...}}}`) is read into the same model by `from_mcp_json`.
"""

# no `from __future__ import annotations` here: pydantic evaluates the annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class McpServerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    command: str | None = None
    args: list[str] = []
    env: dict[str, str] = {}
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default={}, alias="http_headers")
    bearer_token_env_var: str | None = None
    enabled: bool = True
    startup_timeout_sec: float = Field(default=10.0, gt=0, le=600)
    tool_timeout_sec: float = Field(default=60.0, gt=0, le=3600)
    enabled_tools: list[str] | None = None
    disabled_tools: list[str] = []
    kinds: dict[str, Literal["read", "change", "asks"]] = {}
    max_output_chars: int = Field(default=20_000, ge=200, le=1_000_000)

    @model_validator(mode="before")
    @classmethod
    def _headers_either_name(cls, data: Any) -> Any:
        if isinstance(data, dict) and "headers" in data and "http_headers" not in data:
            data = {**data, "http_headers": data["headers"]}
            del data["headers"]
        return data

    @model_validator(mode="after")
    def _one_transport(self) -> "McpServerConfig":
        if bool(self.command) == bool(self.url):
            raise ValueError("an MCP server needs either `command` (stdio) or `url` (streamable HTTP), not "
                             + ("both" if self.command else "neither"))
        if self.url and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"`url` must start with http:// or https:// (got {self.url!r})")
        return self

    def line(self) -> str:
        """The command line or the URL: what a person approves (and what their yes is bound to)."""
        if self.url:
            return self.url
        import shlex

        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(self.env.items()))
        return " ".join(filter(None, [env, shlex.join([str(self.command), *self.args])]))


def from_mcp_json(entry: Any) -> McpServerConfig:
    """One server of a `.mcp.json` (`{"command", "args", "env"}` or `{"type": "http", "url",
    "headers"}`); ValueError when it is neither."""
    if not isinstance(entry, dict):
        raise ValueError("not a table")
    data = {k: v for k, v in entry.items() if k in ("command", "args", "env", "url", "headers", "cwd")}
    return McpServerConfig.model_validate(data)

"""Common base of the HTTP providers: naming, local/cloud detection, headers, sanitizing cloud calls.

The contract of a provider: set `provider`, `default_base_url` and (when not bearer/SSE)
`auth_scheme`, `accept`, `fixed_headers`; implement `payload()` and `_stream()` with the
renderers and argument parser of `llm/wire.py`; take the timeout from `_timeout(settings)`.
"""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import ClassVar
from urllib.parse import urlparse

from duckflow.llm.deadline import guarded
from duckflow.llm.sanitize import TextMasker, mask_messages, restore_stream
from duckflow.llm.types import Message, ModelEvent, ModelSettings, ToolSpec
from duckflow.llm.wire import AuthScheme, headers

_UNIX_SCHEMES = frozenset({"unix", "http+unix", "https+unix"})


def is_local_url(url: str) -> bool:
    """True when `url` points at this machine (text sent there stays unmasked).

    Decided from the parsed host only: an IP literal in a loopback range (127.0.0.0/8, ::1,
    also IPv4-mapped), the name `localhost` exactly, or a unix socket. Nothing else — not
    `127.attacker.example`, not `api.example.com.localhost`, not 0.0.0.0.
    """
    try:
        parsed = urlparse(url.strip())
        host = parsed.hostname
    except ValueError:
        return False
    if parsed.scheme.lower() in _UNIX_SCHEMES:
        return True
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    return bool(ip.is_loopback or (mapped is not None and mapped.is_loopback))


class HTTPModel:
    """A Model reached over HTTP. Subclasses implement `_stream` for their wire format.

    Cloud models (`is_local=False`; by default every base URL that is not this machine) send
    message text through the sanitizer first; with `restore_placeholders=True` (default) the
    placeholders the model echoes back are replaced by the originals before the caller sees them.
    """

    provider = "http"
    default_base_url = ""
    auth_scheme: ClassVar[AuthScheme] = "bearer"
    accept: ClassVar[str | None] = "text/event-stream"
    fixed_headers: ClassVar[Mapping[str, str]] = {}

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        is_local: bool | None = None,
        supports_tools: bool = True,
        timeout_s: float = 120.0,
        headers: dict[str, str] | None = None,
        restore_placeholders: bool = True,
        sanitizer: TextMasker | None = None,
        deadline_s: float | None = 600.0,
    ) -> None:
        self.model = model
        self.name = f"{self.provider}:{model}"
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        self.api_key = api_key
        self.is_local = is_local_url(self.base_url) if is_local is None else is_local
        self.supports_tools = supports_tools
        self.timeout_s = timeout_s
        self.extra_headers = dict(headers or {})
        self.restore_placeholders = restore_placeholders
        self._sanitizer = sanitizer
        self.deadline_s = deadline_s  # the whole call, on top of the per-read timeout_s

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model!r}, base_url={self.base_url!r}, is_local={self.is_local})"

    def _timeout(self, settings: ModelSettings | None) -> float:
        """The call's `timeout_s` when it sets one, else this model's."""
        if settings is not None and settings.timeout_s is not None:
            return settings.timeout_s
        return self.timeout_s

    def _headers(self) -> dict[str, str]:
        return headers(self.api_key, scheme=self.auth_scheme, accept=self.accept,
                       fixed=self.fixed_headers, extra=self.extra_headers)

    async def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] = (),
        settings: ModelSettings | None = None,
    ) -> AsyncIterator[ModelEvent]:
        msgs = list(messages)
        mapping: dict[str, str] = {}
        if not self.is_local:
            from duckflow.llm.constrain import cloud_settings

            masked = mask_messages(msgs, self._sanitizer)
            msgs, mapping = masked.messages, masked.mapping
            settings = cloud_settings(settings, self.provider)  # a grammar holds file text: never sent unmasked
        if self.is_local:  # a local server is never asked for an unbounded reply
            from duckflow.llm.constrain import local_defaults

            settings = local_defaults(settings)
        events = guarded(self._stream(msgs, list(tools), settings or ModelSettings()),
                         provider=self.name, deadline_s=self.deadline_s)
        if self.restore_placeholders and not self.is_local:
            events = restore_stream(events, mapping)  # also un-escapes literal placeholders
        async for ev in events:
            yield ev

    def _stream(
        self, messages: list[Message], tools: list[ToolSpec], settings: ModelSettings
    ) -> AsyncIterator[ModelEvent]:
        raise NotImplementedError

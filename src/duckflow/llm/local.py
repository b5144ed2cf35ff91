"""In-process llama.cpp models (the `[local]` extra): `local:default`, `local:smollm2`, `local:/x.gguf`.

llama-cpp-python loads the GGUF once per process (`_LOADED`, keyed by file, context and
threads) and keeps it warm; `Llama.generate` keeps the evaluated tokens of the last call and
evaluates only what follows the longest shared prefix, so the calls of a session, which share
their system prompt and example, only evaluate what is new. No `LlamaRAMCache`: in llama-cpp-
python 0.3.36 each cached state also copies its prompt's logits (n_tokens × n_vocab float32:
0.5 GB for an 800-token prompt with Qwen2.5's 151,936-token vocabulary) outside the cache's
byte count, so a 256 MB cache grew a bench process past 5 GB. The chat template is the one
stored in the GGUF (`tokenizer.chat_template`, which llama-cpp-python applies when no
`chat_format` is given). Generation runs in a worker thread and streams deltas back to the
event loop; cancelling the consumer stops generation at the next token.

What the wait is for is streamed as `ProgressEvent`s before the text: `loading` (the first call
of a process), `prompt` (the prompt's tokens and how many are new, i.e. not reused from the
evaluated tokens of the last call) and `writing` (the first token is out). The call's `Usage`
carries llama.cpp's own counters (`llama_perf_context`): prompt tokens evaluated, prompt and
generation milliseconds, and the load time.

Constraints come in `ModelSettings.extra`: `grammar` (GBNF text) or `json_schema` (a JSON
schema, turned into a grammar by llama.cpp's own converter), and `stop` (strings).
Token counting uses the model's own tokenizer (`count_tokens`); `register_tokenizer` makes
`llm.tokens.count_tokens` exact for this model's name too.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import AsyncIterator, MutableMapping, Sequence
from typing import Any

from duckflow.errors import DuckflowError
from duckflow.llm.errors import LLMError
from duckflow.llm.localmodels import LocalModelInfo, resolve_local
from duckflow.llm.types import (
    FinishEvent,
    Message,
    ModelEvent,
    ModelSettings,
    ProgressEvent,
    TextDelta,
    ToolSpec,
    Usage,
    UsageEvent,
)

_LOADED: dict[tuple[str, int, int], Any] = {}
_LOAD_LOCK = threading.Lock()
_GEN_LOCKS: dict[int, threading.Lock] = {}  # one generation at a time per loaded model
_STOPS: set[threading.Event] = set()  # the stop flags of the generations running now
_SENTINEL = object()


def _generation_lock(llm: Any) -> threading.Lock:
    with _LOAD_LOCK:
        return _GEN_LOCKS.setdefault(id(llm), threading.Lock())


def close_all(wait_s: float = 5.0) -> None:
    """Stop running generations and free every loaded model (registered with atexit).

    Left to `Llama.__del__` at interpreter teardown, freeing runs after llama_cpp's module
    globals are gone and prints an ignored `TypeError` traceback to the person's terminal."""
    for stop in list(_STOPS):
        stop.set()
    for key, llm in list(_LOADED.items()):
        lock = _GEN_LOCKS.get(id(llm))
        if lock is not None and not lock.acquire(timeout=wait_s):
            continue  # still generating: leave it rather than free memory in use
        try:
            with contextlib.suppress(Exception):
                llm.close()
        finally:
            if lock is not None:
                lock.release()
        _LOADED.pop(key, None)


class LocalModelUnavailable(DuckflowError):
    """llama-cpp-python is missing or the model file cannot be loaded."""


WAIT_POLICY = {"OMP_WAIT_POLICY": "PASSIVE"}  # idle OpenMP threads sleep instead of spinning


def quiet_openmp(env: MutableMapping[str, str]) -> MutableMapping[str, str]:
    """`env` with llama.cpp's OpenMP threads told to sleep when idle (a person's own setting wins).

    The GNU OpenMP runtime reads OMP_WAIT_POLICY once, when llama.cpp's library is loaded, so it
    is set before `import llama_cpp` here and in the environment of a `llama_cpp.server` child.
    Its default spin-wait starves every other process on a busy machine and itself with it: the
    1.5B model decoded 0.45-0.7 tokens/s beside one CPU-bound process, 11.4 with PASSIVE
    (issue 33; `duckflow bench decode` measures it)."""
    for key, value in WAIT_POLICY.items():
        env.setdefault(key, value)
    return env


def _import_llama() -> Any:
    if "llama_cpp" not in sys.modules:
        quiet_openmp(os.environ)
    try:
        import llama_cpp
    except ImportError as exc:
        raise LocalModelUnavailable(
            "llama-cpp-python is not installed, so local models cannot run",
            hint="run `make run` once (it builds it), or `pip install 'duckflow-agent[local]'`; or use "
                 "--model ollama:NAME, OPENAI_BASE_URL=http://127.0.0.1:PORT/v1, or a cloud key",
        ) from exc
    return llama_cpp


def default_threads() -> int:
    """Threads that generate: every core but one (at least one, at most 8), the one left for what
    else the machine runs. Beside one CPU-bound process on 2 cores, 1 thread decoded 12.0
    tokens/s where 2 decoded 11.4 (issue 33), and its rate does not fall when that process
    starts (`duckflow bench decode`)."""
    return max(1, min(8, (os.cpu_count() or 2) - 1))


def batch_threads() -> int:
    """Threads that read the prompt (one batch, compute-bound): every core, at most 8."""
    return max(1, min(8, os.cpu_count() or 2))


def load_llama(path: str, n_ctx: int, n_threads: int) -> Any:
    """The process-wide Llama for (path, n_ctx, n_threads), loaded on first use."""
    key = (path, n_ctx, n_threads)
    with _LOAD_LOCK:
        llm = _LOADED.get(key)
        if llm is None:
            llama_cpp = _import_llama()
            if not _LOADED:
                atexit.register(close_all)
            try:
                llm = llama_cpp.Llama(model_path=path, n_ctx=n_ctx, n_threads=n_threads,
                                      n_threads_batch=max(n_threads, batch_threads()),
                                      n_batch=512, verbose=False)
            except (ValueError, RuntimeError, OSError) as exc:
                raise LocalModelUnavailable(f"llama.cpp could not load {path}: {exc}",
                                            hint="check that the file is a GGUF model") from exc
            from duckflow.llm.localsampler import install

            install(llm)  # a call's grammar is checked on the chosen token (llm/localsampler.py)
            _LOADED[key] = llm
        return llm


def to_chat_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Plain role/content messages (tool results become user text: the template has no tools)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        role = m.role if m.role in ("system", "user", "assistant") else "user"
        content = m.content if m.role != "tool" else f"[result of {m.name or 'tool'}]\n{m.content}"
        if out and out[-1]["role"] == role and role != "system":
            out[-1]["content"] += "\n\n" + content
        else:
            out.append({"role": role, "content": content})
    return out


class LocalModel:
    """A GGUF model run in this process by llama.cpp. `info.params_b` drives the loop mode."""

    provider = "local"
    supports_tools = False
    is_local = True

    def __init__(self, info: LocalModelInfo, *, n_ctx: int = 8192, n_threads: int | None = None,
                 seed: int = 0) -> None:
        self.info = info
        self.name = f"local:{info.key}"
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self.seed = seed
        self.last_usage = Usage()

    @classmethod
    def from_name(cls, name: str, *, local_path: str | None = None, n_ctx: int = 8192,
                  n_threads: int | None = None) -> LocalModel:
        """`default`, `smollm2` or a GGUF path (the part after `local:`)."""
        return cls(resolve_local(name, local_path=local_path), n_ctx=n_ctx, n_threads=n_threads)

    def __repr__(self) -> str:
        return f"LocalModel({str(self.info.path)!r}, n_ctx={self.n_ctx}, n_threads={self.n_threads})"

    @property
    def llama(self) -> Any:
        llm = load_llama(str(self.info.path), self.n_ctx, self.n_threads)
        register_tokenizer(self.name, self.count_tokens)
        return llm

    @property
    def generation_lock(self) -> threading.Lock:
        """Held while this model's llama.cpp generates (one generation at a time per loaded file)."""
        return _generation_lock(self.llama)

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` with the model's own tokenizer."""
        if not text:
            return 0
        return len(self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def _kwargs(self, settings: ModelSettings) -> dict[str, Any]:
        llama_cpp = _import_llama()
        extra = dict(settings.extra)
        kw: dict[str, Any] = {"seed": int(extra.pop("seed", self.seed))}
        kw["temperature"] = 0.2 if settings.temperature is None else settings.temperature
        kw["max_tokens"] = settings.max_tokens or 1024
        grammar = extra.pop("grammar", None)
        schema = extra.pop("json_schema", None)
        if grammar:
            kw["grammar"] = llama_cpp.LlamaGrammar.from_string(grammar, verbose=False)
        elif schema:
            kw["grammar"] = llama_cpp.LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
        if extra.get("stop"):
            kw["stop"] = list(extra.pop("stop"))
        for key in ("top_p", "top_k", "repeat_penalty", "min_p"):
            if key in extra:
                kw[key] = extra.pop(key)
        return kw

    async def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] = (),
        settings: ModelSettings | None = None,
    ) -> AsyncIterator[ModelEvent]:
        settings = settings or ModelSettings()
        if any(m.images for m in messages):  # the text template would drop them without a word
            from duckflow.llm.vision import vision_refusal

            raise LLMError(vision_refusal(self) or f"{self.name} cannot see images", provider=self.name)
        load_ms = 0.0
        if (str(self.info.path), self.n_ctx, self.n_threads) not in _LOADED:
            yield ProgressEvent("loading", f"loading {self.info.label} ({_size_mb(self.info.path)} MB)",
                                detail=self.info.reason)
            started = time.perf_counter()
            llm = await asyncio.to_thread(lambda: self.llama)
            load_ms = (time.perf_counter() - started) * 1000
        else:
            llm = await asyncio.to_thread(lambda: self.llama)
        kw = self._kwargs(settings)
        chat = to_chat_messages(messages)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        stop = threading.Event()
        measured: dict[str, float] = {}

        def put(item: Any) -> None:
            if not loop.is_closed():  # the consumer's loop may be gone after a cancel
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(queue.put_nowait, item)

        def work() -> None:
            _STOPS.add(stop)
            try:
                with _generation_lock(llm):
                    ids = prompt_token_ids(llm, chat)
                    if ids:
                        new = len(ids) - reused_prefix(llm, ids)
                        measured["prompt"] = len(ids)
                        put(ProgressEvent("prompt", f"reading the prompt ({len(ids)} tokens, {new} new)", new))
                    before = perf_counters(llm)
                    pieces = llm.create_chat_completion(chat, stream=True, **kw)
                    finish = "stop"
                    first = True
                    for piece in pieces:
                        if stop.is_set():
                            finish = "cancelled"
                            break
                        choice = (piece.get("choices") or [{}])[0]
                        text = (choice.get("delta") or {}).get("content")
                        if text:
                            if first:
                                first = False
                                put(ProgressEvent("writing", "writing"))
                            put(TextDelta(text))
                        if choice.get("finish_reason"):
                            finish = choice["finish_reason"]
                    with contextlib.suppress(Exception):
                        pieces.close()
                    after = perf_counters(llm)
                    if before and after:
                        measured.update({k: after[k] - before[k] for k in after})
                    put(("finish", finish))
            except BaseException as exc:  # noqa: BLE001 - handed to the consumer
                put(exc)
            finally:
                _STOPS.discard(stop)
                put(_SENTINEL)

        worker = threading.Thread(target=work, name="duckflow-llama", daemon=True)
        worker.start()
        parts: list[str] = []
        finish = "stop"
        try:
            while True:
                item = await queue.get()
                if item is _SENTINEL:
                    break
                if isinstance(item, BaseException):
                    raise LocalModelUnavailable(f"{self.name}: generation failed: {item}",
                                                hint="try a shorter prompt or a larger models.local_context")
                if isinstance(item, tuple):
                    finish = str(item[1])
                    continue
                if isinstance(item, TextDelta):
                    parts.append(item.text)
                yield item
        finally:
            stop.set()
        prompt_tokens = int(measured.get("prompt", 0))
        if not prompt_tokens:
            with contextlib.suppress(Exception):
                prompt_tokens = sum(self.count_tokens(m["content"]) + 4 for m in chat)
        completion = self.count_tokens("".join(parts))
        self.last_usage = Usage(prompt_tokens, completion, int(measured.get("n_p_eval", 0)),
                                round(measured.get("t_p_eval_ms", 0.0), 1), round(measured.get("t_eval_ms", 0.0), 1),
                                round(load_ms, 1))
        yield UsageEvent(self.last_usage)
        yield FinishEvent("length" if finish == "length" else "stop")


def _size_mb(path: Any) -> int:
    try:
        return int(os.path.getsize(path) / 1e6)
    except OSError:
        return 0


_FORMATTERS: dict[int, Any] = {}


def prompt_token_ids(llm: Any, chat: list[dict[str, Any]]) -> list[int]:
    """The prompt tokens llama-cpp-python makes of `chat` with the GGUF's chat template (rendered,
    then tokenized as it does); [] when the model has no template or rendering fails."""
    try:
        formatter = _FORMATTERS.get(id(llm))
        if formatter is None:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            template = llm.metadata.get("tokenizer.chat_template")
            if not template:
                return []
            eos = llm.detokenize([llm.token_eos()]).decode("utf-8", "ignore")
            bos = llm.detokenize([llm.token_bos()]).decode("utf-8", "ignore")
            formatter = _FORMATTERS[id(llm)] = Jinja2ChatFormatter(template, eos_token=eos, bos_token=bos)
        rendered: Any = chat  # plain role/content dicts, as this module sends them
        text = formatter(messages=rendered).prompt
        return list(llm.tokenize(text.encode("utf-8"), add_bos=True, special=True))
    except Exception:  # noqa: BLE001 - a figure for the progress line, never a failure of the call
        return []


def reused_prefix(llm: Any, ids: list[int]) -> int:
    """Prompt tokens llama.cpp will keep from the last call's evaluated tokens (its longest shared
    prefix; when the whole prompt is shared it still evaluates the last token again)."""
    shared = 0
    for a, b in zip(llm._input_ids, ids, strict=False):
        if a != b:
            break
        shared += 1
    return shared - 1 if shared == len(ids) and shared else shared


def perf_counters(llm: Any) -> dict[str, float]:
    """llama.cpp's running counters for this context: prompt tokens evaluated (`n_p_eval`), their
    milliseconds (`t_p_eval_ms`), generated tokens and milliseconds ({} when unavailable)."""
    try:
        import llama_cpp

        data = llama_cpp.llama_perf_context(llm._ctx.ctx)
        return {"n_p_eval": float(data.n_p_eval), "t_p_eval_ms": float(data.t_p_eval_ms),
                "n_eval": float(data.n_eval), "t_eval_ms": float(data.t_eval_ms)}
    except Exception:  # noqa: BLE001 - figures only
        return {}


_TOKENIZERS: dict[str, Any] = {}


def register_tokenizer(name: str, count: Any) -> None:
    """Make `llm.tokens.count_tokens(text, name)` use this model's own tokenizer."""
    if name not in _TOKENIZERS:
        _TOKENIZERS[name] = count
        from duckflow.llm import tokens

        tokens.register_counter(name, count)

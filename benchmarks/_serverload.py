"""The client side of `duckflow bench server`: sessions speaking HTTP/1.1 to the server, paced or in a burst.

Two ways a level of N sessions sends its messages:

- **paced** (the bar), the way a load test (locust, which seed 004 names) drives its users:
  all N sessions are live and each sends a message at a moment spread uniformly over the first
  `pace` seconds (a ramp of N/pace users a second), reads the reply to `done`, and, when its
  schedule has more, waits a think time drawn uniformly from [0.5, 1.5] × `pace` seconds
  (locust's `between`) before the next. The offered rate is about N/pace messages a second: it
  grows with N. (`bench server` sends one message per session per stretch, the levels taking turns.)
- **burst** (shown beside, not a bar): all N messages are written in the same instant.

Every message gets a fresh connection, opened just before the request is written (as a
browser does after the server's keep-alive timeout, 5 s in uvicorn, shorter than the think
time); the clock starts when the request is written and each chunk is stamped when its bytes
arrive, before parsing, so the figures measure the server, not the client.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

THINK_LOW, THINK_HIGH = 0.5, 1.5  # a think time is uniform in [THINK_LOW, THINK_HIGH] x pace


@dataclass
class Run:
    ttfc_ms: float | None = None
    ttft_ms: float | None = None
    chunks: int = 0
    gaps: int = 0
    error: str | None = None
    seconds: float = 0.0
    last_seq: int = 0


@dataclass
class Level:
    sessions: int
    ttfc_p50_ms: float
    ttfc_p99_ms: float
    ttft_p50_ms: float
    ttft_p99_ms: float
    chunks: int
    chunks_per_s: float
    wall_s: float
    errors: int
    seq_gaps: int
    error_samples: list[str] = field(default_factory=list)
    messages: int = 0
    messages_per_s: float = 0.0  # what the sessions actually sent, over the level's wall time
    cpu_ms_per_message: float = 0.0  # the server process's CPU time (all threads) over the level, per message
    client_cpu_ms_per_message: float = 0.0  # this (client) process's CPU time over the level, per message


@dataclass(frozen=True)
class Schedule:
    """When each session of a paced level sends: its first message's offset, then its think times."""

    first: list[float]
    think: list[list[float]]

    @property
    def offered_per_s(self) -> float:
        """Messages a second the schedule asks for, with replies taking no time (N / mean interval)."""
        gaps = [t for row in self.think for t in row]
        mean = sum(gaps) / len(gaps) if gaps else 0.0
        return len(self.first) / mean if mean else float("inf")


def schedule(n: int, pace: float, messages: int, seed: int = 0) -> Schedule:
    """A locust-style plan for n sessions: first messages uniform over [0, pace), then per
    session `messages - 1` think times uniform over [0.5, 1.5] x pace (mean `pace`)."""
    rng = random.Random(seed)
    first = [rng.uniform(0.0, pace) for _ in range(n)]
    think = [[rng.uniform(THINK_LOW * pace, THINK_HIGH * pace) for _ in range(messages - 1)] for _ in range(n)]
    return Schedule(first, think)


def pct(values: list[float], q: float) -> float:
    """The q-quantile by nearest rank (q=0.99 of 30 values is the largest)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def level_of(n: int, runs: list[Run], wall: float) -> Level:
    ttfc = [r.ttfc_ms for r in runs if r.ttfc_ms is not None]
    ttft = [r.ttft_ms for r in runs if r.ttft_ms is not None]
    chunks = sum(r.chunks for r in runs)
    errors = [r.error for r in runs if r.error]
    return Level(n, round(pct(ttfc, 0.5), 2), round(pct(ttfc, 0.99), 2), round(pct(ttft, 0.5), 2),
                 round(pct(ttft, 0.99), 2), chunks, round(chunks / wall, 1) if wall else 0.0, round(wall, 3),
                 len(errors), sum(r.gaps for r in runs), errors[:3], len(runs),
                 round(len(runs) / wall, 1) if wall else 0.0)


STALL_S = 120.0  # a stream that gets no chunk for this long (heartbeats only) is an error, not a hang


class Stream:
    """One client connection speaking HTTP/1.1 through h11 (httpx's own protocol layer) on asyncio
    streams (httpx's shared pool costs O(n) per request at 500 streams and measured the client)."""

    def __init__(self, host: str, port: int, token: str) -> None:
        self.host, self.port, self.token = host, port, token
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        import h11

        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        self.conn = h11.Connection(our_role=h11.CLIENT)

    async def post_sse(self, path: str, body: bytes) -> AsyncIterator[tuple[int, bytes, float]]:
        """(seq, data, when its bytes arrived) for each SSE event of the response: the seq from its
        `id:` line, the JSON from its `data:` line (parsed by the caller only when it must)."""
        import h11

        assert self.writer is not None
        headers = [("host", f"{self.host}:{self.port}"), ("authorization", f"Bearer {self.token}"),
                   ("accept", "text/event-stream"), ("content-type", "application/json"),
                   ("content-length", str(len(body)))]
        out = self.conn.send(h11.Request(method="POST", target=path, headers=headers))
        out += self.conn.send(h11.Data(data=body)) + self.conn.send(h11.EndOfMessage())
        self.writer.write(out)
        await self.writer.drain()
        buf, arrived, seq = b"", time.perf_counter(), 0
        last_chunk = arrived
        while True:
            event = self.conn.next_event()
            if event is h11.NEED_DATA:
                if arrived - last_chunk > STALL_S:  # heartbeats only: the message was never run
                    raise TimeoutError(f"no chunk for {STALL_S:g} s (heartbeats only)")
                data = await asyncio.wait_for(self.reader.read(65536), STALL_S)
                arrived = time.perf_counter()  # before parsing: the clock measures the server
                self.conn.receive_data(data)
                continue
            if isinstance(event, h11.Response) and event.status_code != 200:
                return  # the caller counts a stream without `done` as an error
            if isinstance(event, h11.Data):
                buf += bytes(event.data)
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    if line.startswith(b"id: "):
                        seq = int(line[4:])
                    elif line.startswith(b"data: "):
                        last_chunk = arrived
                        yield seq, line[6:], arrived
            elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                return

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def message_text(session: int, k: int) -> bytes:
    """A different text for every message (nothing downstream sees the same text twice)."""
    return json.dumps({"text": f"hello, message {k} of session {session}: what can you do here?"}).encode()


def chunk_type(data: bytes) -> bytes:
    """The chunk's own `type`: the server writes it before `data`, so it is the first `"type":"`."""
    at = data.find(b'"type":"') + 8
    return data[at:data.index(b'"', at)] if at >= 8 else b""


async def one(stream: Stream, sid: str, body: bytes, after: int = 0) -> Run:
    """One message on an open connection and its stream to `done`; `after` is the session's last seq.

    Each chunk is checked by its `id:` (the seq) and its type; only an `error` or `done` chunk's
    JSON is parsed, so the client (on the same machine) takes little of the CPU it measures."""
    run = Run(last_seq=after)
    expected = after + 1
    try:
        t0 = time.perf_counter()
        done = False
        async for seq, data, now in stream.post_sse(f"/v1/sessions/{sid}/messages", body):
            if run.ttfc_ms is None:
                run.ttfc_ms = (now - t0) * 1000
            kind = chunk_type(data)
            if kind == b"delta" and run.ttft_ms is None:
                run.ttft_ms = (now - t0) * 1000
            if seq != expected:
                run.gaps += 1
            expected = seq + 1
            run.last_seq = seq
            run.chunks += 1
            if kind == b"error":
                run.error = str(json.loads(data)["data"].get("message"))[:200]
            elif kind == b"done":
                done = True
                ending = json.loads(data)["data"].get("ending")
                if ending not in ("input", "done"):
                    run.error = run.error or f"ended {ending}"
                break
        if not done:
            run.error = run.error or "the stream ended without a done chunk (or the status was not 200)"
        run.seconds = time.perf_counter() - t0
    except Exception as exc:  # a failed request is a counted error, not a crash of the bench
        run.error = f"{type(exc).__name__}: {exc}"[:200]
    finally:
        stream.close()
    return run


@dataclass
class Target:
    host: str
    port: int
    token: str
    sent: dict[str, int] = field(default_factory=dict)  # messages sent per session (their texts differ)

    def body(self, sid: str, index: int) -> bytes:
        k = self.sent.get(sid, 0)
        self.sent[sid] = k + 1
        return message_text(index, k)


@dataclass
class Segment:
    """What one stretch of sending gave: each message's run, and how long the stretch took."""

    runs: list[Run]
    wall: float


async def burst(target: Target, sids: list[str], seqs: dict[str, int]) -> Segment:
    """Every session of `sids` writes one message in the same instant (connections opened before)."""
    streams = [Stream(target.host, target.port, target.token) for _ in sids]
    opened = await asyncio.gather(*(s.open() for s in streams), return_exceptions=True)
    start = asyncio.Event()

    async def go(i: int, sid: str) -> Run:
        if isinstance(opened[i], BaseException):
            return Run(error=f"connect: {opened[i]}"[:200], last_seq=seqs.get(sid, 0))
        body = target.body(sid, i)
        await start.wait()
        return await one(streams[i], sid, body, seqs.get(sid, 0))

    tasks = [asyncio.create_task(go(i, sid)) for i, sid in enumerate(sids)]
    await asyncio.sleep(0.05)  # every task waits at the start line
    t0 = time.perf_counter()
    start.set()
    runs = await asyncio.gather(*tasks)
    wall = time.perf_counter() - t0
    seqs.update(zip(sids, (r.last_seq for r in runs), strict=True))
    return Segment(list(runs), wall)


async def paced(target: Target, sids: list[str], seqs: dict[str, int], plan: Schedule) -> Segment:
    """Every session of `sids` live at once, sending on `plan` (see `schedule`)."""
    t0 = time.perf_counter()

    async def user(i: int, sid: str) -> list[Run]:
        runs: list[Run] = []
        await asyncio.sleep(plan.first[i])
        for k in range(len(plan.think[i]) + 1):
            if k:
                await asyncio.sleep(plan.think[i][k - 1])
            stream = Stream(target.host, target.port, target.token)
            try:
                await stream.open()
            except OSError as exc:
                runs.append(Run(error=f"connect: {exc}"[:200], last_seq=seqs.get(sid, 0)))
                continue
            run = await one(stream, sid, target.body(sid, i), seqs.get(sid, 0))
            seqs[sid] = run.last_seq
            runs.append(run)
        return runs

    per_user = await asyncio.gather(*(user(i, sid) for i, sid in enumerate(sids)))
    return Segment([r for runs in per_user for r in runs], time.perf_counter() - t0)


def combine(rounds: list[list[Level]]) -> list[dict[str, Any]]:
    """Per level, over the rounds: medians of the latency figures, sums of errors and gaps."""
    import statistics

    out = []
    for per_round in zip(*rounds, strict=True):
        med = {k: round(statistics.median(getattr(lv, k) for lv in per_round), 2)
               for k in ("ttfc_p50_ms", "ttfc_p99_ms", "ttft_p50_ms", "ttft_p99_ms", "chunks_per_s", "wall_s",
                         "messages_per_s", "cpu_ms_per_message", "client_cpu_ms_per_message")}
        out.append({"sessions": per_round[0].sessions, **med, "chunks": sum(lv.chunks for lv in per_round),
                    "messages": sum(lv.messages for lv in per_round),
                    "errors": sum(lv.errors for lv in per_round), "seq_gaps": sum(lv.seq_gaps for lv in per_round),
                    "ttfc_p99_ms_per_round": [lv.ttfc_p99_ms for lv in per_round],
                    "error_samples": [e for lv in per_round for e in lv.error_samples][:3]})
    return out


def round_ratio(levels: list[Level]) -> float:
    """p99 TTFC at the largest level / at the smallest, in one round."""
    first, last = levels[0].ttfc_p99_ms, levels[-1].ttfc_p99_ms
    return last / first if first else float("inf")

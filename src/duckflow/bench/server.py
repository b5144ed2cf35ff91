"""`duckflow bench server [--json] [--levels 10,100,500]`: concurrent sessions over real HTTP on 127.0.0.1.

A child process runs `duckflow serve`'s app (uvicorn, the real runner, router and companion)
with a ScriptedModel per session whose one reply streams word by word; this process is the
client: httpx makes the sessions, and the messages go out on one asyncio connection per
session speaking HTTP/1.1 through h11 (httpx's shared pool costs O(n) per request at 500
streams and measured the client, not the server). At each level N, N fresh sessions each
POST one message with `Accept: text/event-stream` at the same moment and read their run to
its `done` chunk; TTFC is from writing the request to the first chunk. The messages of a level
arrive in the same instant (a burst) by default; `--window S` spreads them evenly over S
seconds instead, as a load tool ramps its users.
Figures per level: p50/p99 time to first chunk (TTFC) and to first model text, chunks/s,
errors, seq gaps. Memory per idle session = growth of the server's RSS over all sessions
made, once they are idle. Bar: 0 errors and 0 gaps at every level, and p99 TTFC at the
largest level <= 10x p99 TTFC at the smallest (how the cost grows on this machine).

Method (issue 12: a bar that holds on a loaded machine): the levels run in `--rounds` rounds,
each level's sessions taking one message per round; before each level the bench waits until
the server process is idle (the previous level's background work, e.g. its event log, done),
so no level pays for the one before it. The ratio is taken per round (both levels measured
seconds apart) and its median over the rounds is held against the bar; min and max are shown.
The client runs on uvloop when it is installed and stamps each chunk when its bytes arrive.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

RATIO_BAR = 10.0
ROUNDS = 5
IDLE_CPU_S = 0.01  # the server counts as idle when it used less CPU than this in IDLE_WINDOW_S
IDLE_WINDOW_S = 0.2
IDLE_MAX_S = 20.0
REPLY = ("Hello! I read your message and I am ready to help with this workspace: tell me what to "
         "change, and I will plan it, show you the diff and wait for your approval before I write "
         "anything. Ask for a status at any time.")


def _script_step() -> Any:
    from duckflow.llm.scripted import reply

    decision = {"rationale": "a greeting: answer and wait for the task", "goal_consistency": "yes",
                "constraint_check": "yes", "next_step": "pending_user", "step": "PLANNING",
                "prompt_pattern": "base_main", "state_delta": {}, "reply": REPLY}
    return reply(json.dumps(decision))


def serve_child(port: int, workspace: str, rounds: int = 1) -> None:
    """The server side (run in a child process): the real app with a scripted model per session
    (one reply per round: each session takes one message per round)."""
    import uvicorn

    from duckflow.channels.http.app import ServerSettings, create_app, tune_gc
    from duckflow.channels.runner import SessionRunner
    from duckflow.llm.scripted import ScriptedModel

    runner = SessionRunner(workspace, model_factory=lambda: ScriptedModel(
        [_script_step() for _ in range(rounds)], name="bench"))
    settings = ServerSettings(token=os.environ["DUCKFLOW_SERVER_TOKEN"], workspace=workspace, port=port)
    tune_gc()  # as `duckflow serve` does
    uvicorn.run(create_app(settings, runner=runner), host="127.0.0.1", port=port, log_level="error",
                access_log=False, proxy_headers=False, timeout_graceful_shutdown=5)  # as `duckflow serve`


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


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


class _Stream:
    """One client connection speaking HTTP/1.1 through h11 (httpx's own protocol layer) on asyncio
    streams: opened before the start line like a browser's warm connection, so the clock measures
    the server and not a client connection pool."""

    def __init__(self, host: str, port: int, token: str) -> None:
        self.host, self.port, self.token = host, port, token

    async def open(self) -> None:
        import h11

        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        self.conn = h11.Connection(our_role=h11.CLIENT)

    async def post_sse(self, path: str, body: bytes) -> AsyncIterator[tuple[int, str, float]]:
        """(status, data line, when its bytes arrived) for each `data:` line of the response."""
        import h11

        headers = [("host", f"{self.host}:{self.port}"), ("authorization", f"Bearer {self.token}"),
                   ("accept", "text/event-stream"), ("content-type", "application/json"),
                   ("content-length", str(len(body)))]
        out = self.conn.send(h11.Request(method="POST", target=path, headers=headers))
        out += self.conn.send(h11.Data(data=body)) + self.conn.send(h11.EndOfMessage())
        self.writer.write(out)
        await self.writer.drain()
        status, buf, arrived = 0, b"", time.perf_counter()
        while True:
            event = self.conn.next_event()
            if event is h11.NEED_DATA:
                data = await self.reader.read(65536)
                arrived = time.perf_counter()  # before parsing: the clock measures the server
                self.conn.receive_data(data)
                continue
            if isinstance(event, h11.Response):
                status = event.status_code
            elif isinstance(event, h11.Data):
                buf += bytes(event.data)
                *lines, rest = buf.split(b"\n")
                buf = rest
                for line in lines:
                    if line.startswith(b"data:"):
                        yield status, line[5:].decode(), arrived
            elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                return

    def close(self) -> None:
        self.writer.close()


async def _one(stream: _Stream, sid: str, start: asyncio.Event, offset: float, after: int = 0) -> Run:
    """One message and its stream to `done`; `after` is the session's last seq before it."""
    run = Run(last_seq=after)
    expected = after + 1
    try:
        await stream.open()
        await start.wait()
        if offset:
            await asyncio.sleep(offset)
        t0 = time.perf_counter()
        done = False
        async for _status, data, now in stream.post_sse(f"/v1/sessions/{sid}/messages", b'{"text": "hello"}'):
            chunk = json.loads(data)
            if run.ttfc_ms is None:
                run.ttfc_ms = (now - t0) * 1000
            if chunk["type"] == "delta" and run.ttft_ms is None:
                run.ttft_ms = (now - t0) * 1000
            if chunk["seq"] != expected:
                run.gaps += 1
            expected = chunk["seq"] + 1
            run.last_seq = chunk["seq"]
            run.chunks += 1
            if chunk["type"] == "error":
                run.error = str(chunk["data"].get("message"))[:200]
            if chunk["type"] == "done":
                done = True
                if chunk["data"].get("ending") not in ("input", "done"):
                    run.error = run.error or f"ended {chunk['data'].get('ending')}"
                break
        if not done:
            run.error = run.error or "the stream ended without a done chunk (or the status was not 200)"
        run.seconds = time.perf_counter() - t0
    except Exception as exc:  # a failed request is a counted error, not a crash of the bench
        run.error = f"{type(exc).__name__}: {exc}"[:200]
    finally:
        if hasattr(stream, "writer"):
            stream.close()
    return run


async def _create(client: Any, n: int) -> list[str]:
    gate = asyncio.Semaphore(32)

    async def create() -> str:
        async with gate:
            r = await client.post("/v1/sessions")
            r.raise_for_status()
            return str(r.json()["session_id"])

    return list(await asyncio.gather(*(create() for _ in range(n))))


async def _level(client: Any, sids: list[str], window: float, seqs: dict[str, int] | None = None) -> Level:
    """Every session of `sids` sends one message at once (or spread over `window`); `seqs` keeps
    each session's last seq between rounds (so a gap is told from the next round's start)."""
    n = len(sids)
    seqs = {} if seqs is None else seqs
    start = asyncio.Event()
    url = client.base_url
    token = client.headers["authorization"].split(" ", 1)[1]
    tasks = [asyncio.create_task(_one(_Stream(url.host, url.port, token), sid, start, i * window / n,
                                      seqs.get(sid, 0))) for i, sid in enumerate(sids)]
    await asyncio.sleep(0.3 + n / 1000)  # every task has its connection and waits at the start line
    t0 = time.perf_counter()
    start.set()
    runs = await asyncio.gather(*tasks)
    wall = time.perf_counter() - t0
    seqs.update(zip(sids, (r.last_seq for r in runs), strict=True))
    ttfc = [r.ttfc_ms for r in runs if r.ttfc_ms is not None]
    ttft = [r.ttft_ms for r in runs if r.ttft_ms is not None]
    chunks = sum(r.chunks for r in runs)
    errors = [r.error for r in runs if r.error]
    return Level(n, round(_pct(ttfc, 0.5), 2), round(_pct(ttfc, 0.99), 2), round(_pct(ttft, 0.5), 2),
                 round(_pct(ttft, 0.99), 2), chunks, round(chunks / wall, 1) if wall else 0.0, round(wall, 3),
                 len(errors), sum(r.gaps for r in runs), errors[:3])


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) the process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _idle(pid: int) -> float:
    """Wait until the server used < IDLE_CPU_S of CPU in IDLE_WINDOW_S (at most IDLE_MAX_S); seconds waited."""
    started = time.perf_counter()
    try:
        last = _cpu_s(pid)
        while time.perf_counter() - started < IDLE_MAX_S:
            await asyncio.sleep(IDLE_WINDOW_S)
            now = _cpu_s(pid)
            if now - last < IDLE_CPU_S:
                break
            last = now
    except (OSError, IndexError, ValueError):  # no /proc: a fixed pause instead
        await asyncio.sleep(1.0)
    return round(time.perf_counter() - started, 2)


def round_ratio(levels: list[Level]) -> float:
    """p99 TTFC at the largest level / at the smallest, in one round."""
    first, last = levels[0].ttfc_p99_ms, levels[-1].ttfc_p99_ms
    return last / first if first else float("inf")


def combine(rounds: list[list[Level]]) -> list[dict[str, Any]]:
    """Per level, over the rounds: medians of the latency figures, sums of errors and gaps."""
    import statistics

    out = []
    for per_round in zip(*rounds, strict=True):
        med = {k: round(statistics.median(getattr(lv, k) for lv in per_round), 2)
               for k in ("ttfc_p50_ms", "ttfc_p99_ms", "ttft_p50_ms", "ttft_p99_ms", "chunks_per_s", "wall_s")}
        out.append({"sessions": per_round[0].sessions, **med, "chunks": sum(lv.chunks for lv in per_round),
                    "errors": sum(lv.errors for lv in per_round), "seq_gaps": sum(lv.seq_gaps for lv in per_round),
                    "ttfc_p99_ms_per_round": [lv.ttfc_p99_ms for lv in per_round],
                    "error_samples": [e for lv in per_round for e in lv.error_samples][:3]})
    return out


async def _client(url: str, token: str, levels: list[int], pid: int, window: float, rounds: int) -> dict[str, Any]:
    import httpx

    limits = httpx.Limits(max_connections=max(levels) + 50, max_keepalive_connections=max(levels) + 50)
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {token}"},
                                 timeout=httpx.Timeout(180.0), limits=limits) as client:
        warm = await _create(client, 5)
        await _level(client, warm, 0.0)  # warm-up: imports, first session, caches
        await _idle(pid)
        rss0 = _rss_kb(pid)
        pools = [await _create(client, n) for n in levels]  # each level's sessions, one message per round
        waited: list[float] = []
        seqs: dict[str, int] = {}
        results: list[list[Level]] = []
        for _ in range(rounds):
            this_round = []
            for sids in pools:
                waited.append(await _idle(pid))
                this_round.append(await _level(client, sids, window, seqs))
            results.append(this_round)
        await _idle(pid)
        rss1 = _rss_kb(pid)
    made = sum(levels)
    return {"levels": combine(results), "rounds": [[asdict(lv) for lv in r] for r in results],
            "round_ratios": [round(round_ratio(r), 2) for r in results], "idle_wait_s": waited,
            "rss_before_kb": rss0, "rss_after_kb": rss1, "idle_sessions": made,
            "memory_per_idle_session_kb": round((rss1 - rss0) / made, 1) if made else 0.0}


def _loop_factory() -> tuple[Any, str]:
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop, "asyncio"
    return uvloop.new_event_loop, "uvloop"


def _wait_healthy(url: str, proc: subprocess.Popen[bytes]) -> None:
    import httpx

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("the bench server exited at start")
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError("the bench server did not start within 30 s")


def measure(levels: list[int], window: float = 0.0, rounds: int = ROUNDS) -> dict[str, Any]:
    from duckflow.channels.http.auth import MIN_TOKEN_LEN

    token = secrets.token_urlsafe(max(MIN_TOKEN_LEN, 24))
    with tempfile.TemporaryDirectory(prefix="duckflow-bench-server-") as tmp:
        home, ws = Path(tmp) / "home", Path(tmp) / "ws"
        home.mkdir()
        ws.mkdir()
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        env = {**os.environ, "DUCKFLOW_HOME": str(home), "DUCKFLOW_SERVER_TOKEN": token,
               "DUCKFLOW_CONFIG": str(Path(tmp) / "none.toml")}
        proc = subprocess.Popen([sys.executable, "-m", "duckflow.bench.server", "--child", str(port), str(ws),
                                 "--rounds", str(rounds)],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_healthy(url, proc)
            factory, loop_name = _loop_factory()
            with asyncio.Runner(loop_factory=factory) as runner:
                data = runner.run(_client(url, token, levels, proc.pid, window, rounds))
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
    from duckflow.bench._ratio import machine, paired_ratio, ratio_bar

    firsts = [r[0]["ttfc_p99_ms"] for r in data["rounds"]]
    lasts = [r[-1]["ttfc_p99_ms"] for r in data["rounds"]]
    spread = paired_ratio(lasts, firsts) if all(firsts) else {"median": float("inf")}
    bar = ratio_bar(f"p99 TTFC at {levels[-1]} / at {levels[0]} sessions", spread, RATIO_BAR,
                    **{f"ttfc_p99_ms_at_{levels[0]}": data["levels"][0]["ttfc_p99_ms"],
                       f"ttfc_p99_ms_at_{levels[-1]}": data["levels"][-1]["ttfc_p99_ms"]})
    clean = all(lv["errors"] == 0 and lv["seq_gaps"] == 0 for lv in data["levels"])
    data.update({"ttfc_p99_ratio": bar["value"], "ratio_bar": RATIO_BAR, "arrival_window_s": window,
                 "rounds_run": rounds, "client_loop": loop_name, "ratios": [bar], "machine": machine(),
                 "passed": clean and bar["pass"], "cores": os.cpu_count()})
    return data


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="duckflow bench server", description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--levels", default="10,100,500", help="concurrent sessions per level (default 10,100,500)")
    parser.add_argument("--window", type=float, default=0.0,
                        help="seconds over which each level's messages arrive, evenly spread (default 0: "
                             "all in the same instant)")
    parser.add_argument("--rounds", type=int, default=ROUNDS,
                        help=f"rounds of every level; the median of the per-round ratios is held (default {ROUNDS})")
    parser.add_argument("--child", nargs=2, metavar=("PORT", "WORKSPACE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        serve_child(int(args.child[0]), args.child[1], max(1, args.rounds))
        return 0
    try:
        levels = [int(x) for x in args.levels.split(",") if x.strip()]
    except ValueError:
        print("duckflow bench server: --levels takes numbers, e.g. 10,100,500", file=sys.stderr)
        return 2
    if not levels or min(levels) < 1:
        print("duckflow bench server: --levels takes positive numbers, e.g. 10,100,500", file=sys.stderr)
        return 2
    if args.rounds < 1:
        print("duckflow bench server: --rounds takes a number >= 1", file=sys.stderr)
        return 2
    if args.window < 0:
        print("duckflow bench server: --window takes seconds >= 0", file=sys.stderr)
        return 2
    data = measure(levels, args.window, args.rounds)
    if args.json:
        print(json.dumps(data))
        return 0 if data["passed"] else 1
    print(f"duckflow bench server · {data['cores']} cores, load {data['machine']['load_avg']} · real HTTP on "
          f"127.0.0.1 · ScriptedModel · messages of a level arrive within {args.window:g} s · {args.rounds} rounds "
          f"(medians over them; client on {data['client_loop']})")
    print(f"{'sessions':>8} {'TTFC p50':>9} {'TTFC p99':>9} {'text p50':>9} {'text p99':>9} "
          f"{'chunks/s':>9} {'errors':>6} {'gaps':>5}")
    for lv in data["levels"]:
        print(f"{lv['sessions']:>8} {lv['ttfc_p50_ms']:>7.1f}ms {lv['ttfc_p99_ms']:>7.1f}ms {lv['ttft_p50_ms']:>7.1f}ms "
              f"{lv['ttft_p99_ms']:>7.1f}ms {lv['chunks_per_s']:>9.0f} {lv['errors']:>6} {lv['seq_gaps']:>5}")
        for sample in lv["error_samples"]:
            print(f"         error: {sample}")
    bar = data["ratios"][0]
    print(f"p99 TTFC at {levels[-1]} / at {levels[0]}, median of the rounds' ratios: {bar['value']}x "
          f"(per round {', '.join(str(x) for x in data['round_ratios'])}; bar <= {RATIO_BAR:g}x)")
    print(f"memory per idle session: {data['memory_per_idle_session_kb']} KB "
          f"(server RSS {data['rss_before_kb']} -> {data['rss_after_kb']} KB over {data['idle_sessions']} sessions)")
    print("PASS" if data["passed"] else "FAIL")
    return 0 if data["passed"] else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

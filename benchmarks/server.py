"""`duckflow bench server [--json]`: concurrent sessions over real HTTP on 127.0.0.1, paced as a load test.

A child process runs `duckflow serve`'s app (uvicorn, the real runner, router and companion)
with a ScriptedModel per session whose reply streams word by word; this process is the client
(`bench/_serverload.py`): at each level N, N sessions are live and each sends a message at a
moment drawn uniformly over `--pace` seconds (a locust-style ramp) and reads its run to
`done`: one stretch, N/pace messages a second, so the offered rate grows with N. A round gives
every level `--messages` stretches, the levels taking turns (the order reversed each time), so
the machine's load of the moment falls on every level alike. Figures per level: p50/p99 time to first chunk (TTFC) and to first model text,
messages/s, chunks/s, errors, seq gaps; memory per idle session = growth of the server's RSS
over all sessions made, once they are idle.

Bar: 0 errors and 0 gaps at every level, and p99 TTFC at the largest level <= 10x p99 TTFC at
the smallest (how the cost grows), taken per round, median of `--rounds` rounds held.
Beside it (information, not a bar): the same sessions in a burst, all N messages written in the
same instant, whose p99 grows as N x the per-message cost by queueing on one event loop
(docs/server.md). Before each stretch the bench waits until the server process is idle, so no
stretch pays for the one before it. The client runs on uvloop when it is installed, collects
no garbage during a stretch, and reports its own CPU per message beside the server's.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks._serverload import Level, Run, Segment, combine, level_of, round_ratio
from benchmarks._servershared import script_step as _script_step

RATIO_BAR = 10.0
ROUNDS = 3
PACE_S = 5.0  # mean think time of a session between its messages (docs/server.md: why 5 s)
MESSAGES = 3  # messages per session per level and round
CREATE_TRIES = 30  # a session the server could not store yet (503) is asked for again, a second apart
START_S = 90  # how long the server under test may take to answer /healthz (uvicorn workers import duckflow each)
IDLE_CPU_S = 0.01  # the server counts as idle when it used less CPU than this in IDLE_WINDOW_S
IDLE_WINDOW_S = 0.2
IDLE_MAX_S = 20.0
@dataclass(frozen=True)
class Options:
    rounds: int = ROUNDS
    pace: float = PACE_S
    messages: int = MESSAGES
    burst: bool = True
    workers: int = 1  # with redis and database: the server's processes (bench/_servershared.py)
    redis: str | None = None
    database: str | None = None
    workspace: str | None = None  # shared stores: one workspace for the side-by-side runs (the database serves one)

    @property
    def replies(self) -> int:
        """Scripted replies each session needs: its paced and burst messages of every round, + warm-up."""
        return self.rounds * (self.messages + int(self.burst)) + 1


def serve_child(port: int, workspace: str, replies: int = 1) -> None:
    """The server side (run in a child process): the real app with a scripted model per session
    that has `replies` replies (one per message the session will be sent)."""
    import uvicorn

    from duckflow.channels.http.app import ServerSettings, create_app, tune_gc
    from duckflow.channels.runner import SessionRunner
    from duckflow.llm.scripted import ScriptedModel

    runner = SessionRunner(workspace, model_factory=lambda: ScriptedModel(
        [_script_step() for _ in range(replies)], name="bench"))
    settings = ServerSettings(token=os.environ["DUCKFLOW_SERVER_TOKEN"], workspace=workspace, port=port)
    tune_gc()  # as `duckflow serve` does
    uvicorn.run(create_app(settings, runner=runner), host="127.0.0.1", port=port, log_level="error",
                access_log=False, proxy_headers=False, timeout_graceful_shutdown=5)  # as `duckflow serve`


def _rss_kb(pid: int) -> int:
    """The server's resident memory (with its worker processes, if any)."""
    from benchmarks._servershared import tree_rss_kb

    return tree_rss_kb(pid)


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) the server (with its worker processes) has used so far."""
    from benchmarks._servershared import tree_cpu_s

    if not Path(f"/proc/{pid}/stat").exists():
        raise OSError(f"no process {pid}")
    return tree_cpu_s(pid)


def _cpu_or_nan(pid: int) -> float:
    try:
        return _cpu_s(pid)
    except (OSError, IndexError, ValueError):  # no /proc: the figure is not measured
        return float("nan")


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


def verdict(paced_rounds: list[list[Level]], burst_rounds: list[list[Level]], limit: float = RATIO_BAR,
            ) -> dict[str, Any]:
    """The bar: p99 TTFC at the largest paced level / at the smallest, per round, median of the
    rounds <= `limit`, and 0 errors and 0 gaps at every level, paced and burst. The burst's ratio
    is reported beside it and is not a bar (see docs/server.md: a burst costs N x c by queueing)."""
    from benchmarks._ratio import paired_ratio, ratio_bar

    firsts = [r[0].ttfc_p99_ms for r in paced_rounds]
    lasts = [r[-1].ttfc_p99_ms for r in paced_rounds]
    small, large = paced_rounds[0][0].sessions, paced_rounds[0][-1].sessions
    spread = paired_ratio(lasts, firsts) if all(firsts) else {"median": float("inf")}
    levels = combine(paced_rounds)
    bar = ratio_bar(f"p99 TTFC at {large} / at {small} sessions, paced", spread, limit,
                    **{f"ttfc_p99_ms_at_{small}": levels[0]["ttfc_p99_ms"],
                       f"ttfc_p99_ms_at_{large}": levels[-1]["ttfc_p99_ms"]})
    clean = all(lv.errors == 0 and lv.seq_gaps == 0 for r in paced_rounds + burst_rounds for lv in r)
    burst = {}
    if burst_rounds:
        b = paired_ratio([r[-1].ttfc_p99_ms for r in burst_rounds], [r[0].ttfc_p99_ms for r in burst_rounds]) \
            if all(r[0].ttfc_p99_ms for r in burst_rounds) else {"median": float("inf")}
        burst = {"burst_ttfc_p99_ratio": b["median"], "burst_round_ratios": [round(round_ratio(r), 2)
                                                                              for r in burst_rounds]}
    return {"ratios": [bar], "ttfc_p99_ratio": bar["value"], "ratio_bar": limit, "clean": clean,
            "passed": clean and bar["pass"], "round_ratios": [round(round_ratio(r), 2) for r in paced_rounds],
            **burst}


class _Tally:
    """A level's stretches of one round, added up: its runs, wall time and CPU (server, client)."""

    def __init__(self, sessions: int) -> None:
        self.sessions = sessions
        self.runs: list[Run] = []
        self.wall = self.cpu = self.own = 0.0

    def add(self, segment: Segment, cpu_s: float, own_s: float) -> None:
        self.runs += segment.runs
        self.wall += segment.wall
        self.cpu += cpu_s
        self.own += own_s

    def level(self) -> Level:
        level = level_of(self.sessions, self.runs, self.wall)
        level.cpu_ms_per_message = round(self.cpu * 1000 / max(1, level.messages), 2)
        level.client_cpu_ms_per_message = round(self.own * 1000 / max(1, level.messages), 2)
        return level


async def _create(client: Any, n: int) -> list[str]:
    gate = asyncio.Semaphore(32)

    async def create() -> str:
        async with gate:
            for _ in range(CREATE_TRIES):  # setup, not measured: a 503 says "retry in a moment" (a store
                r = await client.post("/v1/sessions")  # write waited past its bound on a busy machine)
                if r.status_code != 503:
                    break
                await asyncio.sleep(1.0)
            r.raise_for_status()
            return str(r.json()["session_id"])

    return list(await asyncio.gather(*(create() for _ in range(n))))


async def _client(url: str, token: str, levels: list[int], pid: int, opts: Options) -> dict[str, Any]:
    import httpx

    from benchmarks._serverload import Target, burst, paced, schedule

    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {token}"},
                                 timeout=httpx.Timeout(180.0)) as client:
        target = Target(client.base_url.host, client.base_url.port or 80, token)
        seqs: dict[str, int] = {}
        warm = await _create(client, 5)
        await burst(target, warm, seqs)  # warm-up: imports, first session, caches
        await _idle(pid)
        rss0 = _rss_kb(pid)
        pools = [await _create(client, n) for n in levels]  # each level's own sessions
        waited: list[float] = []
        paced_rounds: list[list[Level]] = []
        burst_rounds: list[list[Level]] = []
        async def measured(send: Callable[[], Awaitable[Segment]], into: _Tally) -> None:
            """One stretch of sending, with the server's and this client's CPU; the client does not
            collect garbage meanwhile (a pause here would be counted as the server's latency)."""
            waited.append(await _idle(pid))
            gc.collect()
            cpu0, own0 = _cpu_or_nan(pid), time.process_time()
            gc.disable()
            try:
                segment = await send()
            finally:
                gc.enable()
            own = time.process_time() - own0
            await _idle(pid)  # the stretch's background work (event log, trace) counts too
            into.add(segment, _cpu_or_nan(pid) - cpu0, own)

        for r in range(opts.rounds):
            # interleaved: every level sends one message per session in turn, `messages` times, the
            # order reversed each time, so the machine's load of the moment falls on every level alike
            tallies = [_Tally(len(sids)) for sids in pools]
            for k in range(opts.messages):
                order = list(enumerate(pools)) if k % 2 == 0 else list(enumerate(pools))[::-1]
                for i, sids in order:
                    plan = schedule(len(sids), opts.pace, 1, seed=1000 * r + 100 * k + i)
                    await measured(partial(paced, target, sids, seqs, plan), tallies[i])
            paced_rounds.append([t.level() for t in tallies])
            if opts.burst:
                bursts = [_Tally(len(sids)) for sids in pools]
                for sids, tally in zip(pools, bursts, strict=True):
                    await measured(partial(burst, target, sids, seqs), tally)
                burst_rounds.append([t.level() for t in bursts])
        await _idle(pid)
        rss1 = _rss_kb(pid)
    made = sum(levels)
    offered = [round(n / opts.pace, 1) for n in levels]  # the schedule's mean interval is the pace
    return {"levels": [{**lv, "offered_per_s": o} for lv, o in zip(combine(paced_rounds), offered, strict=True)],
            "burst_levels": combine(burst_rounds) if burst_rounds else [],
            "rounds": [[asdict(lv) for lv in r] for r in paced_rounds],
            "burst_rounds": [[asdict(lv) for lv in r] for r in burst_rounds],
            **verdict(paced_rounds, burst_rounds), "idle_wait_s": waited,
            "rss_before_kb": rss0, "rss_after_kb": rss1, "idle_sessions": made,
            "memory_per_idle_session_kb": round((rss1 - rss0) / made, 1) if made else 0.0}


def _loop_factory() -> tuple[Any, str]:
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop, "asyncio"
    return uvloop.new_event_loop, "uvloop"


def _wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    import httpx

    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            said = log.read_text(errors="replace").strip().splitlines()[-1:] if log.exists() else []
            raise RuntimeError(f"the bench server exited at start{': ' + said[0] if said else ''}")
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"the bench server did not start within {START_S} s")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


def measure(levels: list[int], opts: Options | None = None) -> dict[str, Any]:
    from benchmarks._ratio import machine
    from duckflow.channels.http.auth import MIN_TOKEN_LEN

    opts = opts or Options()
    token = secrets.token_urlsafe(max(MIN_TOKEN_LEN, 24))
    load0 = machine()["load_avg"]
    with tempfile.TemporaryDirectory(prefix="duckflow-bench-server-") as tmp:
        home, ws = Path(tmp) / "home", Path(opts.workspace or Path(tmp) / "ws")
        home.mkdir()
        ws.mkdir(exist_ok=True)
        import socket

        env = {**os.environ, "DUCKFLOW_HOME": str(home), "DUCKFLOW_SERVER_TOKEN": token,
               "DUCKFLOW_CONFIG": os.devnull}  # no config file, on purpose
        log = Path(tmp) / "server.log"  # a file, never a pipe nobody reads (a full one stops the server)
        shared = ["--workers", str(opts.workers), "--redis", opts.redis, "--database", opts.database] \
            if opts.redis and opts.database else []
        for attempt in (1, 2):  # a free port picked here can be taken before the server binds it: once more
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = int(s.getsockname()[1])
            proc = subprocess.Popen([sys.executable, "-m", "benchmarks.server", "--child", str(port), str(ws),
                                     "--replies", str(opts.replies), *shared],
                                    env=env, stdout=subprocess.DEVNULL, stderr=log.open("wb"))
            try:
                _wait_healthy(f"http://127.0.0.1:{port}", proc, log)
                break
            except RuntimeError:
                _stop(proc)
                if attempt == 2:
                    raise
        url = f"http://127.0.0.1:{port}"
        try:
            factory, loop_name = _loop_factory()
            with asyncio.Runner(loop_factory=factory) as runner:
                data = runner.run(_client(url, token, levels, proc.pid, opts))
        finally:
            _stop(proc)
    m = machine()
    m["load_avg_before"] = load0
    data.update({"pace_s": opts.pace, "messages_per_session": opts.messages, "rounds_run": opts.rounds,
                 "client_loop": loop_name, "machine": m, "cores": os.cpu_count()})
    return data


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="duckflow bench server", description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--levels", default="10,100,500", help="concurrent sessions per level (default 10,100,500)")
    parser.add_argument("--pace", type=float, default=PACE_S,
                        help=f"mean seconds a session waits after a reply before its next message (default {PACE_S:g})")
    parser.add_argument("--messages", type=int, default=MESSAGES,
                        help=f"messages per session per level and round (default {MESSAGES})")
    parser.add_argument("--rounds", type=int, default=ROUNDS,
                        help=f"rounds of every level; the median of the per-round ratios is held (default {ROUNDS})")
    parser.add_argument("--no-burst", action="store_true", help="skip the burst figures shown beside the bar")
    parser.add_argument("--child", nargs=2, metavar=("PORT", "WORKSPACE"), help=argparse.SUPPRESS)
    parser.add_argument("--replies", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--redis", metavar="URL", help="run the server on Redis and PostgreSQL (with --database)")
    parser.add_argument("--database", metavar="URL", help="PostgreSQL for the server (a scratch database)")
    parser.add_argument("--workers", type=int, default=1, metavar="N",
                        help="server processes (needs --redis, --database); one and N are run side by side")
    args = parser.parse_args(argv)
    if args.child:
        if args.redis and args.database:
            from benchmarks._servershared import serve_shared

            serve_shared(int(args.child[0]), args.child[1], max(1, args.replies), args.workers, args.redis,
                         args.database)
        else:
            serve_child(int(args.child[0]), args.child[1], max(1, args.replies))
        return 0
    if bool(args.redis) != bool(args.database) or (args.workers > 1 and not args.redis):
        print("duckflow bench server: --redis and --database go together, and --workers needs both",
              file=sys.stderr)
        return 2
    try:
        levels = [int(x) for x in args.levels.split(",") if x.strip()]
    except ValueError:
        print("duckflow bench server: --levels takes numbers, e.g. 10,100,500", file=sys.stderr)
        return 2
    for bad, msg in ((not levels or min(levels) < 1, "--levels takes positive numbers, e.g. 10,100,500"),
                     (args.rounds < 1, "--rounds takes a number >= 1"),
                     (args.messages < 1, "--messages takes a number >= 1"),
                     (not args.pace > 0 or args.pace > 3600, "--pace takes seconds, more than 0 and at most 3600")):
        if bad:
            print(f"duckflow bench server: {msg}", file=sys.stderr)
            return 2
    from benchmarks._serverreport import report as _report

    shared_ws = tempfile.mkdtemp(prefix="duckflow-bench-ws-") if args.redis else None
    opts = Options(args.rounds, args.pace, args.messages, not args.no_burst, 1, args.redis, args.database, shared_ws)
    try:
        data = measure(levels, opts)
        if args.workers > 1:  # one process, then N, on the same load
            from dataclasses import replace

            many = measure(levels, replace(opts, workers=args.workers))
    except RuntimeError as e:  # the server under test did not come up: said in one line, not a traceback
        print(f"duckflow bench server: {e}", file=sys.stderr)
        return 2
    if args.workers > 1:
        from benchmarks._servershared import side_by_side

        if not args.json:
            print("one process:")
            _report(data, levels)
            print(f"{args.workers} processes:")
            _report(many, levels)
        data = side_by_side(data, many, args.workers)
        if not args.json:
            print(f"throughput ({args.workers} processes / 1, burst at {levels[-1]}): {data['throughput_ratio']}x")
    if args.json:
        print(json.dumps(data))
    elif args.workers == 1:
        _report(data, levels)
    return 0 if data["passed"] else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

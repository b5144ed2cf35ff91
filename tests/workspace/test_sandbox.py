"""The shell sandbox from the inside: hard deadline, nothing survives, allow-listed env, bwrap box."""

from __future__ import annotations

import os
import socket
import time
import uuid
from pathlib import Path

import pytest

from duckflow.config import WorkspaceConfig
from duckflow.workspace.sandbox import bwrap_argv, sandbox_env
from duckflow.workspace.shell import bwrap_usable, execute_shell

PLAIN = WorkspaceConfig(sandbox="none")
BWRAP = WorkspaceConfig(sandbox="bwrap")
needs_bwrap = pytest.mark.skipif(not bwrap_usable(), reason="bubblewrap missing or unusable here")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def _gone(pid: int, wait: float = 3.0) -> bool:
    deadline = time.monotonic() + wait
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


async def test_setsid_daemon_does_not_stretch_the_deadline_and_dies(tmp_path: Path) -> None:
    # `setsid` leaves the process group; the call must still end at its deadline and kill it.
    command = "setsid sh -c 'echo $$ > daemon.pid; exec sleep 30' & sleep 60"
    started = time.monotonic()
    result = await execute_shell(tmp_path, PLAIN, command, timeout=2)
    took = time.monotonic() - started
    assert result.timed_out and took < 5, took
    pid = int((tmp_path / "daemon.pid").read_text())
    assert _gone(pid)
    assert any(k["pid"] == pid for k in result.killed)
    assert "killed" in (result.note or "") and "sleep 30" in (result.note or "")


async def test_a_daemon_left_behind_after_a_normal_exit_is_killed(tmp_path: Path) -> None:
    # double fork + setsid: the daemon is re-parented, yet it was started by the call
    command = ("(setsid sh -c 'echo $$ > daemon.pid; exec sleep 1000' &); "
               "while [ ! -s daemon.pid ]; do sleep 0.01; done; echo done")
    started = time.monotonic()
    result = await execute_shell(tmp_path, PLAIN, command, timeout=20)
    assert result.stdout.strip() == "done" and result.exit_code == 0 and not result.timed_out
    assert time.monotonic() - started < 5
    pid = int((tmp_path / "daemon.pid").read_text())
    assert _gone(pid)


async def test_a_daemon_holding_the_pipes_cannot_hold_the_call(tmp_path: Path) -> None:
    command = "setsid sleep 30 & echo started"
    started = time.monotonic()
    result = await execute_shell(tmp_path, PLAIN, command, timeout=2)
    assert time.monotonic() - started < 5
    assert result.stdout.strip() == "started"
    assert any("sleep 30" in k["cmd"] for k in result.killed)


SECRETS = {
    "DB_PASS": "hunter2hunter2", "SMTP_PASS": "mailpass-9931", "SSHPASS": "sshpass-7781",
    "MY_APP_PW": "app-pw-5521", "GH_PAT": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "OPENAI": "sk-" + "proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90",
    "STRIPE_SK": "sk_live_" + "51HqLyjWDarjtT1zdp7dcXyz0123456789",
    "CI_JOB_JWT": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "CONN": "Server=db;Database=app;User Id=sa;Password=Sup3rS3cret!;",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "NPM_CONFIG__AUTH": "npm-auth-3321", "MY_SERVICE_TOKEN": "tok-8812",
    "DATABASE_URL": "postgres://u:pw-4411@h/db", "SLACK_WEBHOOK": "https://hooks.slack.com/x",
    "KUBECONFIG_DATA": "kube-9090", "SENTRY_DSN": "https://k@o1.ingest.sentry.io/1",
}


async def test_environment_is_an_allow_list_and_secret_values_are_dropped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    # allowed names with secret-looking values are dropped too
    monkeypatch.setenv("LC_PAPER", "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2")
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setenv("MY_BUILD_FLAG", "fast")
    cfg = WorkspaceConfig(sandbox="none", shell_env_allow=["MY_BUILD_FLAG"])
    result = await execute_shell(tmp_path, cfg, "env; echo HOME_IS=$HOME")
    for name, value in SECRETS.items():
        assert value not in result.stdout and f"{name}=" not in result.stdout, name
    assert "LC_PAPER=" not in result.stdout
    assert "TERM=xterm" in result.stdout and "MY_BUILD_FLAG=fast" in result.stdout
    home = result.stdout.split("HOME_IS=")[1].strip()
    assert home != os.path.expanduser("~") and not Path(home).exists()  # a temp dir, removed


def test_sandbox_env_keeps_the_git_identity_but_not_lc_secrets() -> None:
    env = sandbox_env({"GIT_AUTHOR_NAME": "Ann", "LC_AUTH_TOKEN": "x1", "LC_TIME": "C"}, home="/h")
    assert env["GIT_AUTHOR_NAME"] == "Ann" and env["LC_TIME"] == "C" and "LC_AUTH_TOKEN" not in env


def test_sandbox_env_keeps_locale_and_path() -> None:
    env = sandbox_env({"PATH": "/usr/bin", "LC_ALL": "C", "LANG": "ja_JP.UTF-8", "X": "y"},
                      home="/h")
    assert env == {"PATH": "/usr/bin", "LC_ALL": "C", "LANG": "ja_JP.UTF-8", "HOME": "/h"}


@needs_bwrap
async def test_bwrap_box_seen_from_inside(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    probe = f"duckflow-probe-{uuid.uuid4().hex}"
    sock_dir = Path("/tmp") / f"duckflow-sock-{uuid.uuid4().hex}"
    sock_dir.mkdir()
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock_dir / "host.sock"))
    server.listen(1)
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind(f"\0{probe}")
    abstract.listen(1)
    script = "; ".join([
        "grep CapEff /proc/self/status",
        "mount -o remount,rw / 2>/dev/null && echo REMOUNT-OK",
        f"touch /root/{probe} 2>/dev/null; mkdir -p /root && touch /root/{probe} 2>/dev/null",
        "hostname evil 2>/dev/null && echo HOSTNAME-OK",
        "echo HOSTNAME=$(cat /proc/sys/kernel/hostname)",
        "id -u",
        f"python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); "
        f"s.connect('{sock_dir}/host.sock')\" 2>/dev/null && echo SOCKET-OK",
        f"python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); "
        f"s.connect('\\\\0{probe}')\" 2>/dev/null && echo ABSTRACT-OK",
        "echo RUN-ENTRIES=$(ls -A /run 2>/dev/null | wc -l)",
        "touch .duckflow/x 2>/dev/null && echo DUCKFLOW-WRITABLE",
        "mkdir .duckflow/sub 2>/dev/null && echo DUCKFLOW-WRITABLE",
        "touch inside.txt && echo INSIDE-OK",
        "cat /etc/shadow /etc/ssl/private/* /root/.bash_history 2>/dev/null | head -c 1 | wc -c"
        " | sed 's/^/SECRET-BYTES=/'",
    ])
    hostname_before = socket.gethostname()
    try:
        result = await execute_shell(ws, BWRAP, script, timeout=30)
    finally:
        server.close()
        abstract.close()
        (sock_dir / "host.sock").unlink()
        sock_dir.rmdir()
    out = result.stdout
    assert result.mode == "bwrap", result
    assert "CapEff:\t0000000000000000" in out
    assert "REMOUNT-OK" not in out and "HOSTNAME-OK" not in out
    assert "SOCKET-OK" not in out and "ABSTRACT-OK" not in out
    assert "DUCKFLOW-WRITABLE" not in out and "INSIDE-OK" in out
    assert "RUN-ENTRIES=0" in out  # no host sockets under /run
    assert "SECRET-BYTES=0" in out  # no shadow file, no TLS private keys, no home
    assert not Path(f"/root/{probe}").exists()
    assert socket.gethostname() == hostname_before
    if os.geteuid() == 0:
        assert "\n65534\n" in f"\n{out}"  # an unprivileged uid inside
    assert (ws / "inside.txt").exists()
    assert not (ws / ".duckflow").exists()  # it was absent, and the command could not create it


@needs_bwrap
async def test_bwrap_cannot_replace_duckflow_through_a_link(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "state").mkdir(parents=True)
    os.symlink("state", ws / ".duckflow")  # a cloned repository planted a link
    result = await execute_shell(ws, BWRAP, "touch .duckflow/x state/y; echo done", timeout=30)
    assert result.mode == "bwrap" and "done" in result.stdout
    assert not (ws / "state" / "x").exists() and not (ws / "state" / "y").exists()


@needs_bwrap
async def test_bwrap_deadline_kills_a_setsid_daemon(tmp_path: Path) -> None:
    # a duration unique to this run: another process's `sleep 30` on the machine is not ours
    marker = f"sleep 30.{uuid.uuid4().int % 10**9:09d}"
    command = f"setsid sh -c 'touch daemon.started; exec {marker}' & sleep 60"
    started = time.monotonic()
    result = await execute_shell(tmp_path, BWRAP, command, timeout=3)
    assert result.timed_out and time.monotonic() - started < 8
    assert (tmp_path / "daemon.started").exists()  # the daemon did start inside the box
    leftovers = [int(p) for p in os.listdir("/proc") if p.isdigit() and _cmd(int(p)) == marker]
    assert all(_gone(pid) for pid in leftovers)


def _cmd(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


@needs_bwrap
async def test_bwrap_runs_the_workspace_venv_and_an_absolute_interpreter(tmp_path: Path) -> None:
    import subprocess
    import sys

    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(ws / ".venv")], check=True,
                   timeout=120)
    result = await execute_shell(ws, BWRAP, ".venv/bin/python -c 'print(6 * 7)'", timeout=30)
    assert result.mode == "bwrap" and result.stdout.strip() == "42", result
    argv = bwrap_argv(ws, [sys.executable])
    bound = [argv[i + 1] for i, a in enumerate(argv) if a == "--ro-bind"]
    assert os.path.realpath(os.path.expanduser("~")) not in bound and "/" not in bound


async def test_killing_the_supervisor_does_not_let_a_daemon_escape(tmp_path: Path) -> None:
    # the command kills its own supervisor (its parent) after starting a daemon
    command = ("setsid sh -c 'echo $$ > daemon.pid; exec sleep 300' & "
               "while [ ! -s daemon.pid ]; do sleep 0.01; done; kill -9 $PPID; sleep 60")
    started = time.monotonic()
    result = await execute_shell(tmp_path, PLAIN, command, timeout=3)
    assert time.monotonic() - started < 8
    pid = int((tmp_path / "daemon.pid").read_text())
    assert _gone(pid)
    assert any(k["pid"] == pid for k in result.killed)


async def test_an_agent_shell_call_meets_the_deadline_and_the_env_allow_list(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the real tool path: Agent -> workspace_tools -> execute_shell
    from duckflow.core.agent import Agent
    from duckflow.llm.scripted import ScriptedModel, reply, tool_call
    from duckflow.workspace.tools import workspace_tools

    monkeypatch.setenv("SSHPASS", "sshpass-7781")
    model = ScriptedModel([
        tool_call("execute_shell", command="echo SSHPASS=$SSHPASS; setsid sleep 30 & sleep 60",
                  timeout=2),
        reply("done"),
    ])
    agent = Agent("coder", "run things", model=model,
                  tools=workspace_tools(tmp_path, WorkspaceConfig(sandbox="none")))
    started = time.monotonic()
    result = await agent.run("go")
    assert result.text == "done" and time.monotonic() - started < 10
    responses = [c.data for c in result.chunks if getattr(c, "type", "") == "tool_response"]
    content = responses[0].content
    assert "sshpass-7781" not in content and "sleep 30" in content and "killed" in content

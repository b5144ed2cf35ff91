"""Tools from real MCP servers in `duckflow run` and `Agent.run`, through the same gate as ours.

Real servers as subprocesses (mcp-server-time and mcp-server-git from PyPI; a hostile one that
speaks the protocol's JSON-RPC lines itself), ScriptedModel playing the model, the real gate,
store and `duckflow` command in process. No protocol is mocked.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from duckflow.channels.cli.main import main as cli
from duckflow.llm.scripted import ScriptedModel, tool_call
from tests.helpers.companion import decision
from tests.mcp.servers import hostile, need

pytest.importorskip("mcp")


def _toml(value: Any) -> str:
    if isinstance(value, dict):  # an inline table
        return "{ " + ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def _config(path: Path, servers: dict[str, dict[str, Any]]) -> Path:
    lines = []
    for name, entry in servers.items():
        lines.append(f"[mcp_servers.{name}]")
        lines += [f"{k} = {_toml(v)}" for k, v in entry.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, servers: dict[str, dict[str, Any]],
         script: list[Any], *extra: str) -> tuple[int, ScriptedModel]:
    """`duckflow run` in process with your config naming `servers` and `script` as the model."""
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    monkeypatch.setenv("DUCKFLOW_CONFIG", str(_config(tmp_path / "config.toml", servers)))
    model = ScriptedModel(list(script), name="s", supports_tools=True)
    monkeypatch.setattr("duckflow.companion.models.load_model", lambda name, config: model)
    rc = cli(["run", "use the tool", "-w", str(ws), "--model", "openai:s", *extra])
    return rc, model


def test_a_read_only_mcp_tool_runs_unasked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    server = need("mcp-server-time")
    script = [decision("EXECUTION", "base_main_specialized", rationale="ask the clock"),
              tool_call("mcp__time__get_current_time", timezone="Asia/Tokyo"),
              decision("DONE", next_step="done", rationale="told the time")]
    rc, model = _run(tmp_path, monkeypatch, {"time": {"command": server, "args": ["--local-timezone", "UTC"]}},
                         script, "--json")
    out = capsys.readouterr().out
    result = json.loads(out.strip().splitlines()[-1])
    assert rc == 0 and result["ok"] and not result.get("pending"), out
    offered = {t.name for t in model.requests[1].tools}
    assert {"mcp__time__get_current_time", "mcp__time__convert_time", "write_file"} <= offered
    schema = next(t for t in model.requests[1].tools if t.name == "mcp__time__get_current_time").parameters
    assert schema["required"] == ["timezone"]  # the server's own schema
    sent = json.dumps([m.content for m in model.requests[2].messages])
    assert "Asia/Tokyo" in sent and "+09:00" in sent  # the server's answer reached the model


def test_a_changing_mcp_tool_shows_the_card_and_runs_only_after_yes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    server = need("mcp-server-git")
    repo = tmp_path / "ws"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("hello\n", encoding="utf-8")
    script = [decision("EXECUTION", "base_main_specialized", rationale="stage a.txt"),
              tool_call("mcp__git__git_add", repo_path=str(repo), files=["a.txt"])]
    rc, _ = _run(tmp_path, monkeypatch, {"git": {"command": server}}, script)
    out = capsys.readouterr().out
    assert rc == 4, out  # waiting for a person
    assert "╭─" in out and "git_add" in out and "MCP server git" in out  # the approval card
    staged = subprocess.run(["git", "-C", str(repo), "diff", "--cached", "--name-only"],
                            capture_output=True, text=True, check=True).stdout
    assert staged == ""  # nothing ran before the yes
    from duckflow.gate import Gate
    from duckflow.paths import duckflow_home

    gate = Gate(duckflow_home() / "gate.db")
    try:
        job = gate.pending()[0]
        assert job.request.operation.tool == "mcp__git__git_add" and job.request.risk == "medium"  # annotated not destructive
    finally:
        gate.close()


def test_a_dead_server_is_one_line_and_the_run_goes_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "300")  # each line whole, as a wide terminal shows it
    script = [decision("DONE", next_step="done", rationale="nothing to do", say="Nothing to do.")] * 3
    crash = {"command": sys.executable, "args": ["-c", "import sys; sys.stderr.write('cannot open db\\n'); sys.exit(2)"]}
    missing = {"command": str(tmp_path / "no-such-server")}
    rc, _ = _run(tmp_path, monkeypatch, {"crash": crash, "missing": missing}, script)
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert rc in (0, 1), text  # (the scripted task's own ending does not matter here)
    said = [line for line in text.splitlines() if "MCP server" in line]
    assert len(said) == 2, text
    assert any("'crash' did not start" in line and "cannot open db" in line for line in said)
    assert any("'missing' did not start: there is no command" in line for line in said)
    assert "Traceback" not in text


def test_a_slow_server_times_out(tmp_path: Path) -> None:
    from duckflow import McpHub, McpServerConfig

    cfg = McpServerConfig(command=sys.executable, args=["-c", "import time; time.sleep(60)"], startup_timeout_sec=1.5)
    hub = McpHub({"sleepy": cfg})
    started = time.monotonic()
    try:
        assert hub.tools() == []
        assert time.monotonic() - started < 10
        assert hub.problems == ["MCP server 'sleepy' did not start within 1.5 s; its tools are not available"]
    finally:
        hub.close()


async def test_hostile_output_is_bounded_and_named(tmp_path: Path) -> None:
    from duckflow import McpHub, McpServerConfig

    flood = McpServerConfig.model_validate({**hostile(tmp_path, "flood"), "max_output_chars": 5000})
    bad = McpServerConfig.model_validate(hostile(tmp_path, "malformed"))
    slow = McpServerConfig.model_validate({**hostile(tmp_path, "slow"), "tool_timeout_sec": 1})
    hub = McpHub({"flood": flood, "bad": bad, "slow": slow})
    try:
        tools = {t.name: t for t in await hub.start()}
        assert set(tools) == {"mcp__flood__dump", "mcp__bad__dump", "mcp__slow__dump"}
        assert len(tools["mcp__flood__dump"].description) <= 1030  # a 50,000-character description, capped
        text = await tools["mcp__flood__dump"].invoke({})
        assert len(text) < 5200 and "cut at 5,000 of 3,000,000 characters" in text and "flood" in text
        with pytest.raises(Exception, match=r"server bad\) failed or sent a malformed answer"):
            await tools["mcp__bad__dump"].invoke({})
        with pytest.raises(Exception, match=r"did not answer within 1 s"):
            await tools["mcp__slow__dump"].invoke({})
    finally:
        hub.close()


async def test_agent_run_uses_mcp_tools_and_asks_before_a_changing_one(tmp_path: Path) -> None:
    from duckflow import Agent, McpHub, McpServerConfig

    git = need("mcp-server-git")
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("hello\n", encoding="utf-8")
    hub = McpHub({"git": McpServerConfig(command=git)})
    try:
        tools = await hub.start()
        model = ScriptedModel([tool_call("mcp__git__git_status", repo_path=str(repo)),
                               tool_call("mcp__git__git_add", repo_path=str(repo), files=["a.txt"]),
                               "staged"], name="s")
        agent = Agent("git-helper", "You use git.", model=model, tools=tools, ask_approval=True)
        first = await agent.run("stage a.txt")
        assert first.pending and first.pending[0].call.name == "mcp__git__git_add"  # asked, not run
        status_result = json.dumps([m.content for m in model.requests[1].messages])
        assert "a.txt" in status_result  # git_status (read-only) ran unasked and its answer came back
        staged = subprocess.run(["git", "-C", str(repo), "diff", "--cached", "--name-only"],
                                capture_output=True, text=True, check=True).stdout
        assert staged == ""
    finally:
        hub.close()


def test_without_a_server_nothing_of_mcp_is_imported(tmp_path: Path) -> None:
    code = ("import sys, duckflow; from duckflow.channels.cli.main import main;"
            f"main(['run', 'Create hello.py', '-w', {str(tmp_path)!r}, '--model', 'scripted:demo',"
            " '--auto-approve-workspace']); print('mcp' in sys.modules, 'duckflow.core.mcphub' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")})
    assert out.stdout.strip().splitlines()[-1] == "False False", out.stdout + out.stderr


def test_a_repositorys_own_servers_start_only_after_the_persons_yes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A cloned repository's .mcp.json and .duckflow/config.toml name servers; none starts until
    `duckflow mcp allow`, and a changed command line asks again."""
    monkeypatch.setenv("COLUMNS", "1000")
    ws = tmp_path / "ws"
    (ws / ".duckflow").mkdir(parents=True)
    marker = tmp_path / "started"
    touch = {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'a').write('x')"]}
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"evil": touch}}), encoding="utf-8")
    (ws / ".duckflow" / "config.toml").write_text(
        f"[mcp_servers.sly]\ncommand = {json.dumps(sys.executable)}\nargs = ['-c', \"open({str(marker)!r}, 'a').write('y')\"]\n",
        encoding="utf-8")
    script = [decision("DONE", next_step="done", rationale="done", say="Done.")] * 3
    _run(tmp_path, monkeypatch, {}, script)
    out = capsys.readouterr().out
    assert not marker.exists()  # neither ran
    assert "The repository's .mcp.json names the MCP server 'evil'" in out
    assert f"duckflow mcp allow evil -w {ws}" in out and "'sly'" in out
    assert cli(["mcp", "allow", "evil", "-w", str(ws)]) == 0
    capsys.readouterr()
    _run(tmp_path, monkeypatch, {}, script)
    assert marker.read_text() == "x"  # allowed: started (it is no MCP server, so it fails: one line)
    assert "MCP server 'evil' did not start" in capsys.readouterr().out
    touch["args"] = ["-c", f"open({str(marker)!r}, 'a').write('z')"]
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"evil": touch}}), encoding="utf-8")
    _run(tmp_path, monkeypatch, {}, script)
    assert marker.read_text() == "x"  # a new command line: asked again, not run
    assert "names the MCP server 'evil'" in capsys.readouterr().out


def test_mcp_add_list_remove_edit_your_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("tomlkit")
    config = tmp_path / "config.toml"
    config.write_text("# my settings\n[companion]\nlanguage = \"en\"\n", encoding="utf-8")
    monkeypatch.setenv("DUCKFLOW_CONFIG", str(config))
    assert cli(["mcp", "add", "time", "--env", "TZ=UTC", "--", "mcp-server-time", "--local-timezone", "UTC"]) == 0
    assert cli(["mcp", "add", "docs", "--url", "http://127.0.0.1:8123/mcp", "--header", "Authorization=Bearer x"]) == 0
    text = config.read_text()
    assert text.startswith("# my settings\n[companion]")  # your file as it was, plus the servers
    from duckflow.config import load_config

    servers = load_config().mcp_servers
    assert servers["time"].command == "mcp-server-time" and servers["time"].args == ["--local-timezone", "UTC"]
    assert servers["time"].env == {"TZ": "UTC"} and servers["docs"].headers == {"Authorization": "Bearer x"}
    capsys.readouterr()
    assert cli(["mcp", "list", "-w", str(tmp_path)]) == 0
    listed = capsys.readouterr().out
    assert "time" in listed and "stdio: TZ=UTC mcp-server-time --local-timezone UTC" in listed
    assert "http: http://127.0.0.1:8123/mcp" in listed
    assert cli(["mcp", "remove", "time"]) == 0
    assert "time" not in load_config().mcp_servers and "docs" in load_config().mcp_servers
    assert cli(["mcp", "remove", "time"]) == 1
    assert cli(["mcp", "add", "broken"]) == 1
    err = capsys.readouterr().err
    assert "needs either `command` (stdio) or `url`" in err and "Traceback" not in err


async def test_npm_filesystem_server_reads_unasked_and_asks_before_a_write(tmp_path: Path) -> None:
    from duckflow import Agent, McpHub, McpServerConfig
    from tests.mcp.servers import npm_server

    main = npm_server("server-filesystem")
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "notes.txt").write_text("the password is in the vault\n", encoding="utf-8")
    hub = McpHub({"fs": McpServerConfig(command="node", args=[str(main), str(shared)])})
    try:
        tools = await hub.start()
        assert hub.problems == []
        model = ScriptedModel([tool_call("mcp__fs__read_text_file", path=str(shared / "notes.txt")),
                               tool_call("mcp__fs__write_file", path=str(shared / "new.txt"), content="x"),
                               "done"], name="s")
        agent = Agent("files", "You manage files.", model=model, tools=tools, ask_approval=True)
        result = await agent.run("read notes.txt, then write new.txt")
        assert "the password is in the vault" in json.dumps([m.content for m in model.requests[1].messages])
        assert result.pending and result.pending[0].call.name == "mcp__fs__write_file"
        assert not (shared / "new.txt").exists()
    finally:
        hub.close()


def test_npm_everything_server_in_duckflow_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from tests.mcp.servers import npm_server

    main = npm_server("server-everything")
    script = [decision("EXECUTION", "base_main_specialized", rationale="echo"),
              tool_call("mcp__everything__echo", message="quack"),
              decision("DONE", next_step="done", rationale="echoed")]
    rc, model = _run(tmp_path, monkeypatch, {"everything": {"command": "node", "args": [str(main)]}}, script, "--json")
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "Echo: quack" in json.dumps([m.content for m in model.requests[2].messages])


@pytest.mark.parametrize("mode", ["single_call", "two_call"])
async def test_a_small_models_sym_ops_reply_can_call_an_mcp_tool(env: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               mode: str) -> None:
    """A local model writes Sym-Ops under a grammar: the grammar offers the MCP server's tools
    (`$ NAME @ argument`), and such a line runs the tool (read-only: unasked)."""
    from duckflow.llm.scripted import ScriptStep

    server = need("mcp-server-time")
    monkeypatch.setenv("DUCKFLOW_CONFIG", str(_config(tmp_path / "config.toml", {"time": {"command": server}})))
    line = "$ mcp__time__get_current_time @ Asia/Tokyo\n"
    steps: list[Any] = [ScriptStep(text="~ ask the clock\n#c0.9 #m0.9 #f0.9 #s0.9\n" + line + "~ next: DONE\n")]
    if mode == "two_call":
        steps.insert(0, decision("EXECUTION", "base_main_specialized", rationale="ask the clock"))
    class LocalScripted(ScriptedModel):  # looks like llama.cpp's server here: grammars are sent
        provider = "llamacpp"

    model = LocalScripted(steps, name="tiny", is_local=True, supports_tools=False)
    o = env.open(model, codec="symops", mode=mode)
    result = await o.session.handle_message("What time is it in Tokyo? Use the clock tool.")
    ran = [x for x in result.outcomes if x.call.name == "mcp__time__get_current_time"]
    assert ran and ran[0].status == "ok" and "+09:00" in ran[0].content, result.outcomes
    settings = model.requests[-1].settings
    grammar = str(settings.extra.get("grammar", "") if settings is not None else "")
    assert '"mcp__time__get_current_time"' in grammar and '" @ "' in grammar, grammar[:500]
    from tests.helpers.gbnf_walk import Walker

    specs = o.session.runner.specs
    for seed in range(40):  # whatever the grammar lets a tool line be, the codec reads as that call
        text = Walker(grammar, seed=seed, star_max=6).sample()
        wanted = [ln for ln in text.splitlines() if ln.startswith("$ mcp__time__")]
        calls = [c for c in o.session.codec.decode(text, specs).calls if c.name.startswith("mcp__time__")]
        assert len(calls) == len(wanted), (text, calls)
    try:
        from llama_cpp import LlamaGrammar
    except ImportError:
        return
    LlamaGrammar.from_string(grammar, verbose=False)  # llama.cpp reads it


async def test_an_mcp_tools_output_reaches_a_cloud_model_masked(tmp_path: Path) -> None:
    """What a server returns is workspace-like text: a cloud model gets it with its secrets masked
    (the provider's sanitizer, as for a built-in tool's result); the trace keeps it masked too."""
    from duckflow import Agent, McpHub, McpServerConfig
    from duckflow.llm.openai_compat import OpenAICompatModel
    from tests.helpers.fakeserver import FakeServer, Reply, openai_stream

    hub = McpHub({"vault": McpServerConfig.model_validate(hostile(tmp_path, "secret"))})
    server = await FakeServer().start()
    try:
        tools = await hub.start()
        call = [{"index": 0, "id": "c1", "function": {"name": "mcp__vault__dump", "arguments": "{}"}}]
        server.queue("/v1/chat/completions", Reply(chunks=openai_stream([], tool_calls=call)),
                     Reply(chunks=openai_stream(["The key is stored."])))
        cloud = OpenAICompatModel("gpt-test", base_url=f"{server.url}/v1", is_local=False)
        result = await Agent("ops", "You help.", model=cloud, tools=tools, codec="native").run("what is in the vault?")
        assert result.ok and len(server.requests) == 2, (result, result.error, [r.path for r in server.requests])
        second = server.requests[1].body.decode()
        assert "mcp__vault__dump" in second and "[SECRET:aws_access_key#1]" in second
        assert "AKIAQ3EGRSTUVWXYZ7AB" not in second and "hanako.yamada@example.co.jp" not in second
    finally:
        await server.close()
        hub.close()


def test_a_servers_sessions_share_one_set_of_mcp_servers_closed_with_it(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """`duckflow serve` opens many sessions: they share the servers (started once), which end
    when the server's runner closes (no process left behind)."""
    from duckflow.channels.runner import SessionRunner

    server = need("mcp-server-time")
    monkeypatch.setenv("DUCKFLOW_CONFIG", str(_config(tmp_path / "config.toml", {"time": {"command": server}})))
    ws = tmp_path / "ws"
    ws.mkdir()
    runner = SessionRunner(ws, model_name="scripted:demo")
    try:
        first = runner.session(runner.new_session())
        second = runner.session(runner.new_session())
        ours = [t for t in first.runner.tools if t.name.startswith("mcp__time__")]
        assert ours and ours == [t for t in second.runner.tools if t.name.startswith("mcp__time__")]
        hub = runner._shared_parts()["mcp"]
        assert hub is not None and first.mcp is None  # shared: not a session's own
        procs = [p for p in hub._clients]  # the live connection
        assert procs == ["time"]
    finally:
        runner.close()
    assert hub._loop is None and hub._clients == {}


def test_duckflow_run_bounds_and_names_a_hostile_servers_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """In `duckflow run` a flood reaches the model cut, with a note naming the cut; a malformed
    answer is one error naming the server and the tool; the run goes on."""
    script = [decision("EXECUTION", "base_main_specialized", rationale="dump"),
              tool_call("mcp__flood__dump"),
              decision("EXECUTION", "base_main_specialized", rationale="dump again"),
              tool_call("mcp__bad__dump"),
              decision("DONE", next_step="done", rationale="dumped", say="Dumped.")]
    rc, model = _run(tmp_path, monkeypatch, {"flood": hostile(tmp_path, "flood"), "bad": hostile(tmp_path, "malformed")},
                     script, "--json")
    out = capsys.readouterr().out
    seen = json.dumps([m.content for m in model.requests[2].messages])
    assert "mcp__flood__dump() → ok: [output of MCP tool dump (server flood) cut at 20,000 of 3,000,000" \
        in json.loads(seen)[0], seen[:3000]  # the evidence line names the cut
    assert len(seen) < 40_000
    later = json.dumps([m.content for m in model.requests[-1].messages])
    assert "server bad) failed or sent a malformed answer" in later
    assert "Traceback" not in out and json.loads(out.strip().splitlines()[-1])["session_id"]  # a plain ending


def test_mcp_list_masks_a_token_in_a_servers_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    token = "ghp_" + "R8d3kQ2vX9mN4pL7sT1wY6zB0cF5hJ8aE3uG"  # GitHub's token format
    monkeypatch.setenv("DUCKFLOW_CONFIG", str(_config(tmp_path / "config.toml", {
        "github": {"command": "github-mcp-server", "args": ["stdio"], "env": {"GITHUB_TOKEN": token}}})))
    assert cli(["mcp", "list", "-w", str(tmp_path)]) == 0
    assert cli(["mcp", "list", "-w", str(tmp_path), "--json"]) == 0
    out = capsys.readouterr().out
    assert token not in out and "github-mcp-server stdio" in out and "GITHUB_TOKEN=" in out

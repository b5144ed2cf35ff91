"""The edit verb at its seams: what an edit writes is what the approval showed, byte for byte.

An edit of a file that is not UTF-8 used to rewrite every undecodable byte as U+FFFD (the diff
showed no change on those lines); terminal escapes, a lone CR, bidi overrides ("Trojan Source")
or a form feed in a model's REPLACE text could hide or reorder lines where the approval is shown
(Slack, LINE, the server's JSON, the terminal). Driven through the real tool path (Agent →
workspace_tools → edit_file), the single-call companion and its gate, and `duckflow undo`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from duckflow.channels.cli.main import main
from duckflow.config import WorkspaceConfig
from duckflow.core.agent import Agent
from duckflow.llm.scripted import ScriptedModel, reply, tool_call
from duckflow.workspace.tools import workspace_tools
from tests.helpers.companion import env  # noqa: F401

HUNK = "<<<<<<< SEARCH\n{}=======\n{}>>>>>>> REPLACE\n"


async def _edit(root: Path, path: str, content: str) -> str:
    model = ScriptedModel([tool_call("edit_file", path=path, content=content), reply("done")])
    agent = Agent("coder", "edit", model=model, tools=workspace_tools(root, WorkspaceConfig()))
    result = await agent.run("go")
    return str([c.data.content for c in result.chunks if getattr(c, "type", "") == "tool_response"][0])


async def test_an_edit_never_rewrites_bytes_it_cannot_show(tmp_path: Path) -> None:
    # Latin-1 text past the 8 KB binary sniff: read with replacement characters, the edit wrote
    # `caf\xef\xbf\xbd` for `caf\xe9` on a line it did not touch
    data = b"ok\n" * 5000 + b"caf\xe9 au lait\nline2\n"
    (tmp_path / "menu.txt").write_bytes(data)
    content = await _edit(tmp_path, "menu.txt", HUNK.format("line2\n", "line3\n"))
    assert (tmp_path / "menu.txt").read_bytes() == data
    assert "not UTF-8" in content and "write_file" in content


async def test_an_edit_keeps_every_other_byte_and_undo_restores_them_exactly(
        tmp_path: Path, capsys: Any) -> None:
    # a BOM, CRLF endings, tabs, a U+FFFD that is really in the file, no final newline
    data = "\ufeffdef f():\r\n\treturn 1  # \ufffd kept\r\n\r\nx = f()".encode()
    (tmp_path / "m.py").write_bytes(data)
    await _edit(tmp_path, "m.py", HUNK.format("\treturn 1  # \ufffd kept\n", "\treturn 2  # \ufffd kept\n"))
    assert (tmp_path / "m.py").read_bytes() == data.replace(b"return 1", b"return 2")
    assert main(["undo", "--workspace", str(tmp_path)]) == 0
    assert (tmp_path / "m.py").read_bytes() == data


HIDDEN = {
    "\x1b[2K": "\\x1b[2K",          # erases the line it is on in a terminal
    "\u202e": "\\u202e",            # right-to-left override: the line reads reversed
    "\u2066": "\\u2066",            # left-to-right isolate (Trojan Source)
    "\r": "\\x0d",                  # a lone CR: Python reads a new line there
    "\x0c": "\\x0c",                # form feed: str.splitlines broke the diff's line there
    "\u200b": "\\u200b",            # zero-width space
}


async def test_the_approval_diff_shows_escapes_bidi_and_lone_cr_as_written(env: Any) -> None:  # noqa: F811
    (env.root / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    # in comments, so the file still parses (an edit that would not parse is re-asked, never shown)
    evil = "".join(f"    # x{i} = 1{raw}y{i} = 2\n" for i, raw in enumerate(HIDDEN))
    edit = ("~ edit calc.py\x1b[1A\x1b[2K\n#c0.9 #m0.8 #f0.9 #s0.9\n$ edit @ calc.py\n---\n"
            + HUNK.format("    return a + b\n", "    return a + b\n" + evil) + "---\n~ next: DONE\n")
    o = env.open([reply(edit)], codec="symops", mode="single-call")
    res = await o.session.handle_message("Change calc.py")
    assert res.pending is not None  # a person is asked, with the diff
    diff = res.pending["request"]["diff_preview"]
    for i, (raw, shown) in enumerate(HIDDEN.items()):
        assert raw not in diff
        assert f"+    # x{i} = 1{shown}y{i} = 2\n" in diff, diff  # one line, as in the file
    assert "\x1b" not in str(res.pending["request"])  # the model's thought is shown as written, too
    assert "calc.py\\x1b[1A\\x1b[2K" in res.pending["request"]["rationale"]

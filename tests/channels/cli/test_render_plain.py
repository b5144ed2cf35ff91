"""Streamed text on a pipe is written as it is: byte for byte what rich prints there."""

from __future__ import annotations

import io
import random

import pytest

from duckflow.channels.cli.render import Renderer
from duckflow.core.chunks import delta


def _pieces(seed: int) -> list[str]:
    rng = random.Random(seed)
    alphabet = ["ab", " ", "cd ", "\n", "日本", "é", "🦆", "·", "[bold]x[/]", ":duck:", "\\", "\t", "\x07", "\r",
                "x" * 30, "y" * 90, "\u200b", "  "]
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8))) for _ in range(40)]


@pytest.mark.parametrize("seed", range(8))
def test_plain_writes_equal_richs_output(seed: int, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    agents = ["companion", "companion.chat", "worker"]
    chunks = [delta(agents[i % 3 if i % 5 == 0 else 0], t) for i, t in enumerate(_pieces(seed))]

    fast = Renderer()  # its own console: stdout is captured, so not a terminal
    assert fast._plain_ok
    for c in chunks:
        fast(c)
    fast._close_line()
    got = capsys.readouterr().out

    slow = Renderer()
    monkeypatch.setattr(slow, "_plain_ok", False)  # everything through rich
    for c in chunks:
        slow(c)
    slow._close_line()
    assert got == capsys.readouterr().out


def test_a_console_given_from_outside_or_a_terminal_always_goes_through_rich() -> None:
    from rich.console import Console

    assert not Renderer(console=Console(file=io.StringIO()))._plain_ok
    assert not Renderer(console=Console(file=io.StringIO(), force_terminal=True))._plain_ok

"""docs/security.md's threat model names real tests: every `file::test` in its table exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _references() -> list[tuple[str, str]]:
    text = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    table = text[text.index("## Threat model"):]
    refs: list[tuple[str, str]] = []
    for line in table.splitlines():
        if not line.startswith("|") or line.startswith("|---"):
            continue
        current = ""
        for ref in re.findall(r"`([^`]*::[^`]+)`", line.rstrip("|").split("|")[-1]):
            path, name = ref.split("::")
            current = path or current
            refs.append((current, name))
    return refs


def test_every_row_names_tests_that_exist() -> None:
    refs = _references()
    assert len(refs) >= 40
    missing = [f"{p}::{n}" for p, n in refs
               if not (ROOT / "tests" / p).is_file()
               or not re.search(rf"def {re.escape(n)}\b", (ROOT / "tests" / p).read_text(encoding="utf-8"))]
    assert missing == []


def test_every_asset_meets_every_attacker() -> None:
    text = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    rows = [line.split("|")[1:3] for line in text[text.index("## Threat model"):].splitlines()
            if line.startswith("| ") and not line.startswith("| asset")]
    assets = {a.strip() for a, _ in rows}
    attackers = "".join(b for _, b in rows)
    assert {"outside", "workspace", "secrets", "approval"} <= assets
    assert all(who in attackers for who in ("M", "R", "L", "W"))

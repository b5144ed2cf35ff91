"""The fast paths of the repair's line helpers agree with the general code they skip."""

from __future__ import annotations

import random

from duckflow.protocols.symops.lines import (
    _TICK,
    _clean_target,
    _clean_target_general,
    _strip_prefixes,
    _tick,
    undecorate,
)

_SYMS = frozenset("$~#`")
_STARS = frozenset("*_")
_ALPHABET = list("*_`$~# \t-+•>1.)sSaAnx:@/\"'“”「」\u3000\xa0") + ["step", "**", "$ ", "操作", "```", "~~~"]


def _texts(seed: int, count: int) -> list[str]:
    rnd = random.Random(seed)
    return ["".join(rnd.choice(_ALPHABET) for _ in range(rnd.randint(0, 9))) for _ in range(count)]


def test_undecorate_skips_prefixes_only_where_none_can_match() -> None:
    hits = 0
    for s in _texts(11, 40_000):
        c = s[:1]
        if c == "`" or (c in _STARS and (s[1:2] in _SYMS or (s[1:2] in _STARS and s[2:3] in _SYMS))):
            hits += 1
            assert _strip_prefixes(s) == s, repr(s)  # the step the fast path leaves out is a no-op
    assert hits > 1000


def test_undecorate_known_shapes() -> None:
    assert undecorate("**$ create @ `a.py`**") == "$ create @ `a.py`"
    assert undecorate("`$ run @ ls`") == "$ run @ ls"
    assert undecorate("- **$ edit @ b.py**") == "$ edit @ b.py"
    assert undecorate("1. $ delete @ c.py") == "$ delete @ c.py"
    assert undecorate("**Step 1:** $ run @ ls") == "$ run @ ls"
    assert undecorate("* plain prose") == "* plain prose"


def test_clean_target_fast_path_equals_general() -> None:
    rnd = random.Random(12)
    for s in _texts(13, 40_000):
        t = "`" + s + "`" if rnd.random() < 0.7 else s
        assert _clean_target(t) == _clean_target_general(t), repr(t)
    assert _clean_target("`src/a.py`") == ("src/a.py", True)
    assert _clean_target("` a.py`") == ("a.py", True)
    assert _clean_target("`a.py:`") == ("a.py", True)


def test_tick_bare_fence_fast_path_equals_pattern() -> None:
    for s in ["```", "````", "~~~", "~~~~~", "```python", "~~~ js", "``` ```", "```x`"] + _texts(14, 20_000):
        m = _TICK.fullmatch(s) if s[:3] in ("```", "~~~") else None
        assert _tick(s) == ((m.group(1), m.group(2)) if m else None), repr(s)


def test_loose_vitals_quick_rejection_keeps_what_the_patterns_find() -> None:
    from duckflow.protocols.symops.lines import parse_loose_vitals

    assert parse_loose_vitals("You may also want to create `src/extra.py` with:") is None
    assert parse_loose_vitals("Confidence: 80%") == ("#c0.8", True)
    assert parse_loose_vitals("MOOD = 0.5, focus: 0.7") == ("#m0.5 #f0.7", False)
    assert parse_loose_vitals("#c 0.9") == ("#c0.9", False)


def test_undecorate_bold_action_fast_path_equals_general() -> None:
    from duckflow.protocols.symops.lines import _undecorate_general

    rnd = random.Random(15)
    for s in _texts(16, 30_000):
        t = "**$" + s + ("**" if rnd.random() < 0.6 else "")
        assert undecorate(t) == _undecorate_general(t), repr(t)


def test_split_action_fast_path_equals_pattern() -> None:
    from duckflow.protocols.symops.lines import _ACTION, split_action

    rnd = random.Random(17)
    verbs = ["create", "edit", "run", "Écrire", "作成", "ed_it", "a*b", "x:y", "", " ", "run\t"]
    tails = ["@ a.py", "@  a.py \t", "@\tb", "@ ", "@", ": a", "a.py", " @ `x` ", "@ a\r", "@ a \r "]
    cases = [f"$ {v} {t}" for v in verbs for t in tails] + ["$" + s for s in _texts(18, 20_000)]
    cases += ["$ " + rnd.choice(verbs) + " @ " + s for s in _texts(19, 20_000)]
    for core in cases:
        m = _ACTION.fullmatch(core)
        assert split_action(core) == (None if m is None else (m.group(1), m.group(2), m.group(3))), repr(core)

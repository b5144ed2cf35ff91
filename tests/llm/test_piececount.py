"""The piece cache: exact counts equal tiktoken's, the bound is never below them, warm starts load no BPE."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from duckflow.llm import tokens
from duckflow.llm.piececount import PieceCounter, piece_counter
from duckflow.llm.tokens import count_tokens, token_bound

ENC = tokens.get_encoding()
assert ENC is not None
TEXT = st.text(alphabet=st.sampled_from(list("ab cd\n\t'sll 12345 .,!?-_()Ａあいうアイウ漢字😀é\r")), max_size=80)


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_count_equals_tiktoken_and_bound_is_never_below(text: str) -> None:
    counter = PieceCounter("cl100k_base")
    truth = len(ENC.encode_ordinary(text))
    upper, exact = counter.bound(text)
    assert upper >= truth
    assert counter.count(text, lambda: ENC) == truth
    assert counter.bound(text) == (truth, True)          # learnt: the bound is now the count


def test_prompt_templates_count_exactly() -> None:
    root = Path(tokens.__file__).parents[1] / "prompts" / "templates"
    for path in sorted(root.rglob("*.j2")):
        text = path.read_text(encoding="utf-8")
        assert count_tokens(text).tokens == len(ENC.encode_ordinary(text)), path


def test_cache_persists_and_drops_impossible_entries(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    first = PieceCounter("cl100k_base", path)
    first.count("hello budget world", lambda: ENC)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["pieces"][" budget"] == 1
    data["pieces"]["hello"] = 0                            # impossible: fewer than one token
    data["pieces"][" world"] = 99                          # impossible: more tokens than bytes
    path.write_text(json.dumps(data), encoding="utf-8")
    again = PieceCounter("cl100k_base", path)
    assert "hello" not in again.pieces and " world" not in again.pieces and " budget" in again.pieces
    assert again.bound("hello budget world") == (len("hello") + 1 + len(" world"), False)


def test_token_bound_is_exact_after_one_count() -> None:
    text = "Plan the next step and write the file."
    piece_counter("cl100k_base").pieces.clear()
    assert not token_bound(text).exact
    assert token_bound(text).tokens >= count_tokens(text).tokens
    assert token_bound(text) == (count_tokens(text).tokens, True, "tiktoken:cl100k_base")


def test_a_warm_start_counts_known_text_without_loading_tiktoken(tmp_path: Path) -> None:
    code = ("import sys\nfrom duckflow.llm.tokens import count_tokens\n"
            "n = count_tokens('Write hello.py and run it.').tokens\n"
            "print(n, 'tiktoken' in sys.modules)")
    env = {**os.environ, "DUCKFLOW_HOME": str(tmp_path)}
    cold = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    warm = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    n = str(len(ENC.encode_ordinary("Write hello.py and run it.")))
    assert cold.stdout.split() == [n, "True"], cold.stderr
    assert warm.stdout.split() == [n, "False"], warm.stderr


def test_patterns_read_from_source_equal_tiktokens_own() -> None:
    import tiktoken_ext.openai_public as op

    from duckflow.llm.piececount import pat_str

    for name in ("cl100k_base", "o200k_base"):
        constructor = getattr(op, name)
        import types

        stub = types.FunctionType(constructor.__code__, {**constructor.__globals__, "load_tiktoken_bpe": lambda *a, **k: {}},
                                  name, constructor.__defaults__, constructor.__closure__)
        assert pat_str(name) == stub()["pat_str"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(list("aZ09 '\t\n\r\x0b\x0c.,!?-_()sdmtlvre") + ["ll", "'s", "'ve", "  "]),
                max_size=40).map("".join))
def test_the_ascii_splitter_equals_tiktokens_pattern_on_ascii_text(text: str) -> None:
    from duckflow.llm.piececount import ascii_pre_tokenizer, pre_tokenizer

    fast = ascii_pre_tokenizer("cl100k_base")
    assert fast is not None
    assert fast.findall(text) == pre_tokenizer("cl100k_base").findall(text)


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(list("aZ09 '\t\n.,-sdmt") + ["ll", "'s", "  ", "·", "—", "…", "→", "🦆", "✓",
                                                          "\u0301", "é", "ſ", "K", "²", "٣", "\u00a0", "\u3000",
                                                          "\x1c", "日本", "Ⅷ"]),
                max_size=40).map("".join))
def test_split_equals_tiktokens_pattern_on_any_text(text: str) -> None:
    """The `re` fast path is taken only where it splits as tiktoken's own pattern does."""
    from duckflow.llm.piececount import pre_tokenizer, split

    assert split("cl100k_base", text) == pre_tokenizer("cl100k_base").findall(text)


def test_english_text_is_split_without_importing_regex(tmp_path: Path) -> None:
    code = ("import sys\nfrom duckflow.llm.tokens import token_bound\n"
            "token_bound('Plan the next step, then write hello.py.')\n"
            "token_bound('日本語のテキスト')\nprint('after-ja', 'regex' in sys.modules)")
    code_en = ("import sys\nfrom duckflow.llm.tokens import token_bound\n"
               "token_bound('Plan the next step, then write hello.py.')\n"
               "token_bound('Step: PLANNING · Status: IN_PROGRESS — 🦆 done → next')\nprint('regex' in sys.modules)")
    env = {**os.environ, "DUCKFLOW_HOME": str(tmp_path)}
    en = subprocess.run([sys.executable, "-c", code_en], capture_output=True, text=True, env=env, timeout=60)
    ja = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert en.stdout.split() == ["False"], en.stderr
    assert ja.stdout.split() == ["after-ja", "True"], ja.stderr


LINES = st.lists(st.sampled_from(list("aZ09 '\t\n\r/.,-:#sdmt") + ["ll", "'s", "  ", "\n\n", " \n", "·", "—", "→",
                                                                   "é", "日本", "\u00a0", "\u3000", "\x1c", "\x85",
                                                                   "//", "\n/", "\n ", "\n-", "\n'"]),
                 max_size=60).map("".join)


@settings(max_examples=800, deadline=None)
@given(LINES)
def test_segments_cut_only_where_no_piece_crosses(text: str) -> None:
    """The pieces of a text are its segments' pieces in order, for both encodings' own patterns."""
    from duckflow.llm.piececount import pre_tokenizer, segments

    parts = segments(text)
    assert "".join(parts) == text
    for name in ("cl100k_base", "o200k_base"):
        whole = pre_tokenizer(name).findall(text)
        assert [p for seg in parts for p in pre_tokenizer(name).findall(seg)] == whole, name


def test_segments_cut_after_a_newline_before_a_plain_line_start() -> None:
    from duckflow.llm.piececount import segments

    assert segments("Step: PLANNING\n- goal\n  indented\n/path\n\nnext") == [
        "Step: PLANNING\n", "- goal\n  indented\n/path\n\n", "next"]
    assert segments("one line") == ["one line"]


@settings(max_examples=300, deadline=None)
@given(st.lists(LINES, min_size=1, max_size=4))
def test_the_segment_cache_gives_the_uncached_bound_and_follows_learnt_pieces(texts: list[str]) -> None:
    counter = PieceCounter("cl100k_base")
    for text in texts:  # the same lines again and again, as a prompt rendered every turn
        assert counter.bound(text) == counter._bound(text)
        assert counter.bound(text + "\nStep: REVIEW\n" + text) == counter._bound(text + "\nStep: REVIEW\n" + text)
    text = "\n".join(texts)
    counter.count(text, lambda: ENC)                       # pieces learnt: cached bounds must not stay
    assert counter.bound(text) == (len(ENC.encode_ordinary(text)), True)
    counter.pieces.clear()                                 # and pieces dropped: neither
    assert counter.bound(text) == counter._bound(text)

"""Patch algebra: validation, apply, merge with conflicts, issues → change_map (properties)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from duckflow.apps.smartao.patch import (
    Change,
    ChangeOp,
    Issue,
    PatchError,
    PatchJSON,
    apply_changes,
    make_patch,
    merge_patches,
    patch_from_issues,
    validate_patch,
)

TEXT = st.text(alphabet="abc あい\n#", min_size=0, max_size=40)


@st.composite
def text_and_changes(draw: st.DrawFn, text: str | None = None) -> tuple[str, list[Change]]:
    t = draw(TEXT) if text is None else text
    cuts = sorted(draw(st.lists(st.integers(0, len(t)), max_size=8)))
    changes: list[Change] = []
    for a, b in zip(cuts[::2], cuts[1::2], strict=False):
        if a == b:
            changes.append(Change(op=ChangeOp.insert, start=a, end=a, text=draw(st.text("xyz", min_size=1, max_size=3))))
        elif draw(st.booleans()):
            changes.append(Change(op=ChangeOp.delete, start=a, end=b))
        else:
            changes.append(Change(op=ChangeOp.replace, start=a, end=b, text=draw(st.text("xyz", max_size=4))))
    # drop inserts that collide with a neighbour at the same point (ambiguous by design)
    clean: list[Change] = []
    for c in changes:
        if not any(c.overlaps(k) for k in clean):
            clean.append(c)
    return t, clean


def _naive(text: str, changes: list[Change]) -> str:
    for c in sorted(changes, key=lambda c: (c.start, 0 if c.op is ChangeOp.insert else 1), reverse=True):
        text = text[:c.start] + (c.text or "") + text[c.end:]
    return text


@settings(max_examples=300, deadline=None)
@given(text_and_changes())
def test_apply_equals_naive_right_to_left_application(tc: tuple[str, list[Change]]) -> None:
    text, changes = tc
    patch = make_patch(text, changes)
    assert patch.new_text == _naive(text, changes)
    assert validate_patch(text, patch.model_dump()) == patch


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_merge_keeps_first_on_overlap_and_reports_every_dropped_change(data: st.DataObject) -> None:
    text = data.draw(TEXT)
    _, a = data.draw(text_and_changes(text))
    _, b = data.draw(text_and_changes(text))
    pa, pb = make_patch(text, a), make_patch(text, b)
    merged = merge_patches(text, pa, pb)
    kept = merged.patch.change_map
    assert set(a) <= set(kept)                              # the first patch always survives whole
    dropped = {c.dropped for c in merged.conflicts}
    assert set(kept) | dropped == set(a) | set(b)           # nothing lost silently
    assert not dropped & set(kept)
    for c in merged.conflicts:
        assert c.kept in a and c.kept.overlaps(c.dropped)
    validate_patch(text, merged.patch)                      # sorted, non-overlapping, consistent
    assert merge_patches(text, pa, pb) == merged             # deterministic
    assert merge_patches(text, pa, pa).patch == pa           # identical changes count once
    assert merge_patches(text, pa, PatchJSON(new_text=text, change_map=[])).patch == pa


def test_merge_of_disjoint_patches_applies_both() -> None:
    text = "The cat sat on teh mat."
    draft = make_patch(text, [Change(op=ChangeOp.insert, start=23, end=23, text=" It was warm.")])
    style = make_patch(text, [Change(op=ChangeOp.replace, start=15, end=18, text="the")])
    merged = merge_patches(text, draft, style)
    assert merged.patch.new_text == "The cat sat on the mat. It was warm."
    assert merged.conflicts == []


def test_overlapping_change_of_the_second_patch_is_reported_not_applied() -> None:
    text = "I has a dream."
    draft = make_patch(text, [Change(op=ChangeOp.replace, start=0, end=13, text="I had a clear dream")])
    style = make_patch(text, [Change(op=ChangeOp.replace, start=2, end=5, text="have")])
    merged = merge_patches(text, draft, style)
    assert merged.patch.new_text == "I had a clear dream."
    assert [c.dropped.text for c in merged.conflicts] == ["have"]


@pytest.mark.parametrize("patch, message", [
    ({"new_text": "x", "change_map": [{"op": "replace", "start": 0, "end": 99, "text": "x"}]}, "past the end"),
    ({"new_text": "ab", "change_map": [{"op": "replace", "start": 2, "end": 4, "text": "z"},
                                       {"op": "delete", "start": 0, "end": 1}]}, "sorted"),
    ({"new_text": "z", "change_map": [{"op": "delete", "start": 0, "end": 3},
                                      {"op": "replace", "start": 2, "end": 4, "text": "z"}]}, "overlaps"),
    ({"new_text": "WRONG", "change_map": [{"op": "delete", "start": 0, "end": 1}]}, "disagrees"),
    ({"new_text": "x", "change_map": [{"op": "insert", "start": 0, "end": 2, "text": "x"}]}, "zero-width"),
    ({"new_text": "x", "change_map": [{"op": "delete", "start": 0, "end": 1, "text": "x"}]}, "no text"),
])
def test_invalid_patches_are_refused_with_the_reason(patch: dict, message: str) -> None:
    with pytest.raises(PatchError, match=message):
        validate_patch("abcdef", patch)


def test_patch_from_issues_applies_fixes_and_skips_overlaps_and_unfixable() -> None:
    text = "i think alot."
    issues = [Issue(0, 1, "pronoun", "lowercase-i", "I"), Issue(8, 12, "spelling", "spelling", "a lot"),
              Issue(9, 12, "overlap", "x", "zz"), Issue(2, 7, "no fix", "y", None)]
    patch, skipped = patch_from_issues(text, issues)
    assert patch.new_text == "I think a lot."
    assert {i.rule for i in skipped} == {"x", "y"}


def test_apply_changes_refuses_unsorted_input() -> None:
    with pytest.raises(PatchError):
        apply_changes("abc", [Change(op=ChangeOp.delete, start=2, end=3), Change(op=ChangeOp.delete, start=0, end=1)])

"""Essay patches: ChangeOp/Change/PatchJSON, validation, apply, merge with conflicts, issues → patch.

A patch is a list of changes against ONE original text, with character offsets into it
(Python string indices). The rules, and why:

- every change is checked against the original: offsets inside it, `start <= end`, an insert
  is zero-width and carries text, a delete carries none — so a patch produced by a model can
  be refused with a precise reason instead of silently garbling an essay;
- the changes are sorted and do not overlap, so applying them is one left-to-right pass and the
  result does not depend on the order anybody applied them in;
- `new_text` must equal the original with the change map applied: a patch whose summary and
  whose text disagree is rejected (the person is shown the change map, so it must be the truth).

`merge_patches(original, a, b)` combines two patches on the same original (the Coordinator's
Draft + Style merge). Deterministic rule: identical changes count once; when a change of `b`
overlaps a change of `a` (their ranges intersect, an insert falls strictly inside the other's
range, or two different inserts sit at one point) the change of `a` is kept and the one of `b`
is dropped and reported as a `Conflict`. Callers pass the patch that should win first.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator


class ChangeOp(str, Enum):
    insert = "insert"
    delete = "delete"
    replace = "replace"  # type: ignore[assignment]  # the seed's name; shadows str.replace on members only


class Change(BaseModel):
    """One edit of the original: `[start, end)` replaced by `text` (insert: start == end)."""

    model_config = ConfigDict(frozen=True)

    op: ChangeOp
    start: int
    end: int
    text: str | None = None

    @model_validator(mode="after")
    def _shape(self) -> Change:
        if self.start < 0 or self.end < self.start:
            raise ValueError(f"bad range [{self.start}, {self.end})")
        if self.op is ChangeOp.insert:
            if self.start != self.end:
                raise ValueError(f"an insert is zero-width, got [{self.start}, {self.end})")
            if not self.text:
                raise ValueError("an insert needs text")
        elif self.start == self.end:
            raise ValueError(f"a {self.op.value} needs a non-empty range, got [{self.start}, {self.end})")
        if self.op is ChangeOp.delete and self.text:
            raise ValueError("a delete carries no text")
        if self.op is ChangeOp.replace and self.text is None:
            raise ValueError("a replace needs text (use delete to remove)")
        return self

    @property
    def new(self) -> str:
        return self.text or ""

    def overlaps(self, other: Change) -> bool:
        """True when the two cannot both apply to one original without an order choice."""
        if self.op is ChangeOp.insert and other.op is ChangeOp.insert:
            return self.start == other.start
        if self.op is ChangeOp.insert:
            return other.start < self.start < other.end
        if other.op is ChangeOp.insert:
            return self.start < other.start < self.end
        return self.start < other.end and other.start < self.end


class PatchJSON(BaseModel):
    """The text after the patch and the change map that produced it from the original."""

    new_text: str
    change_map: list[Change]


class PatchError(ValueError):
    """A patch that does not fit its original; the message names the first problem."""


def _order(c: Change) -> tuple[int, int]:
    return (c.start, 0 if c.op is ChangeOp.insert else 1)


def check_changes(original: str, changes: Sequence[Change]) -> None:
    """Raise PatchError unless every change fits `original`, sorted and non-overlapping."""
    n = len(original)
    prev: Change | None = None
    for i, c in enumerate(changes):
        if c.end > n:
            raise PatchError(f"change {i} ends at {c.end}, past the end of the text ({n})")
        if prev is not None:
            if _order(c) < _order(prev):
                raise PatchError(f"change {i} starts at {c.start}, before change {i - 1} ({prev.start}): "
                                 "changes must be sorted")
            if c.overlaps(prev):
                raise PatchError(f"change {i} [{c.start}, {c.end}) overlaps change {i - 1} "
                                 f"[{prev.start}, {prev.end})")
        prev = c


def apply_changes(original: str, changes: Sequence[Change]) -> str:
    """The original with `changes` applied (checked first)."""
    check_changes(original, changes)
    out: list[str] = []
    pos = 0
    for c in changes:
        out.append(original[pos:c.start])
        out.append(c.new)
        pos = c.end
    out.append(original[pos:])
    return "".join(out)


def make_patch(original: str, changes: Iterable[Change]) -> PatchJSON:
    """A validated PatchJSON from changes (sorted here; overlaps still refused)."""
    ordered = sorted(changes, key=_order)
    return PatchJSON(new_text=apply_changes(original, ordered), change_map=ordered)


def validate_patch(original: str, patch: PatchJSON | dict[str, Any]) -> PatchJSON:
    """Parse and check a patch against its original; raise PatchError with the reason."""
    try:
        p = patch if isinstance(patch, PatchJSON) else PatchJSON.model_validate(patch)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise PatchError(f"not a patch: {where}: {first['msg']}") from exc
    expected = apply_changes(original, p.change_map)
    if expected != p.new_text:
        at = next((i for i, (x, y) in enumerate(zip(expected, p.new_text, strict=False)) if x != y),
                  min(len(expected), len(p.new_text)))
        raise PatchError(f"new_text disagrees with the change map from character {at}")
    return p


@dataclass(frozen=True)
class Conflict:
    """A change of the second patch dropped because it overlaps a kept change of the first."""

    kept: Change
    dropped: Change
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"kept": self.kept.model_dump(mode="json"), "dropped": self.dropped.model_dump(mode="json"),
                "reason": self.reason}


@dataclass(frozen=True)
class MergeResult:
    patch: PatchJSON
    conflicts: list[Conflict]


def merge_patches(original: str, first: PatchJSON, second: PatchJSON) -> MergeResult:
    """Both patches applied to `original`; on overlap the change of `first` wins (see module doc)."""
    validate_patch(original, first)
    validate_patch(original, second)
    kept = list(first.change_map)
    seen = set(kept)
    conflicts: list[Conflict] = []
    for c in second.change_map:
        if c in seen:
            continue
        clash = next((k for k in kept if k.overlaps(c)), None)
        if clash is not None:
            conflicts.append(Conflict(clash, c, f"overlaps [{clash.start}, {clash.end}) of the first patch"))
            continue
        kept.append(c)
        seen.add(c)
    return MergeResult(make_patch(original, kept), conflicts)


@dataclass(frozen=True)
class Issue:
    """A finding in a text: `[start, end)` should become `suggestion` (None: no fix offered)."""

    start: int
    end: int
    message: str
    rule: str
    suggestion: str | None = None

    def to_dict(self, text: str | None = None) -> dict[str, Any]:
        """With the text it was found in: also the 1-based `line`, `col` and the `sentence`."""
        out: dict[str, Any] = {"start": self.start, "end": self.end, "message": self.message,
                               "rule": self.rule, "suggestion": self.suggestion}
        if text is not None:
            line = text.count("\n", 0, self.start) + 1
            col = self.start - (text.rfind("\n", 0, self.start) + 1) + 1
            out.update(line=line, col=col, sentence=sentence_at(text, self.start, self.end))
        return out


_ENDS = "。！？!?\n"


def sentence_at(text: str, start: int, end: int) -> str:
    """The sentence (cut at 。！？!? . and line ends) holding `text[start:end]`, stripped."""
    a = start
    while a > 0 and text[a - 1] not in _ENDS and not (text[a - 1] == "." and a < len(text) and text[a] == " "):
        a -= 1
    b = max(end, start)
    while b < len(text) and text[b] != "\n":
        b += 1
        if text[b - 1] in "。！？!?" or (text[b - 1] == "." and (b == len(text) or text[b].isspace())):
            break
    return text[a:b].strip()


def patch_from_issues(original: str, issues: Iterable[Issue]) -> tuple[PatchJSON, list[Issue]]:
    """A patch applying each issue's suggestion; issues without one or that overlap are skipped.

    Issues are taken by position (then the shorter first); one overlapping an issue already
    taken is returned in the skipped list rather than guessed at.
    """
    changes: list[Change] = []
    skipped: list[Issue] = []
    for issue in sorted(issues, key=lambda i: (i.start, i.end - i.start)):
        if issue.suggestion is None or not (0 <= issue.start <= issue.end <= len(original)):
            skipped.append(issue)
            continue
        if issue.start == issue.end:
            if not issue.suggestion:
                skipped.append(issue)
                continue
            change = Change(op=ChangeOp.insert, start=issue.start, end=issue.end, text=issue.suggestion)
        elif issue.suggestion == "":
            change = Change(op=ChangeOp.delete, start=issue.start, end=issue.end)
        elif original[issue.start:issue.end] == issue.suggestion:
            skipped.append(issue)
            continue
        else:
            change = Change(op=ChangeOp.replace, start=issue.start, end=issue.end, text=issue.suggestion)
        if any(change.overlaps(c) for c in changes):
            skipped.append(issue)
            continue
        changes.append(change)
    return make_patch(original, changes), skipped


def summarize(original: str, patch: PatchJSON) -> dict[str, int]:
    """Counts for a report: changes by op, characters removed and added."""
    removed = sum(c.end - c.start for c in patch.change_map)
    added = sum(len(c.new) for c in patch.change_map)
    ops = {op.value: sum(1 for c in patch.change_map if c.op is op) for op in ChangeOp}
    return {"changes": len(patch.change_map), **ops, "chars_removed": removed, "chars_added": added,
            "length_before": len(original), "length_after": len(patch.new_text)}

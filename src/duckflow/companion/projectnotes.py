"""The project's AGENTS.md in the companion's prompts: the root's, and the nearest one above each
file the task names or the session wrote (core/instruction_files.py reads them safely, within
`companion.agents_md_tokens`, framed as the repository's notes that cannot change approvals,
the model or the sandbox)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from duckflow.core.instruction_files import ProjectInstructions, agents_files, load_instructions


@dataclass
class ProjectNotes:
    root: Path
    max_tokens: int = 600
    said: set[str] = field(default_factory=set)  # trim notes already told to the person
    _read: dict[tuple[str, ...], ProjectInstructions] = field(default_factory=dict)

    def current(self, edited: Iterable[str] = ()) -> ProjectInstructions:
        """What applies now (read once per set of files)."""
        files = tuple(agents_files(self.root, sorted(set(edited))))
        if files not in self._read:
            self._read[files] = load_instructions(files, root=self.root, max_tokens=self.max_tokens)
        return self._read[files]

    def unsaid(self, read: ProjectInstructions) -> list[str]:
        """The notes (trimmed, not read) not yet told to the person."""
        new = [n for n in read.notes if n not in self.said]
        self.said.update(new)
        return new


def project_notes(root: Path, config: object) -> ProjectNotes | None:
    """The session's notes when `companion.agents_md` is on (the default)."""
    if not getattr(config, "agents_md", True):
        return None
    return ProjectNotes(root, int(getattr(config, "agents_md_tokens", 600)))

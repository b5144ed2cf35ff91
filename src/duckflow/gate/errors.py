"""Errors a person meets at the gate: unknown or ambiguous job ids, answering twice, expiry."""

from __future__ import annotations

from duckflow.errors import DuckflowError


class GateError(DuckflowError):
    """Base of gate errors."""


class UnknownJob(GateError):
    """No job has that id or prefix."""

    def __init__(self, job_id: str) -> None:
        super().__init__(f"no approval job matches '{job_id}'.",
                         hint="list jobs with `duckflow approvals list --all`")


class AmbiguousJob(GateError):
    """Several jobs share the prefix."""

    def __init__(self, prefix: str, matches: list[str]) -> None:
        shown = ", ".join(m[:12] for m in matches[:5])
        super().__init__(f"'{prefix}' matches {len(matches)} jobs ({shown}).",
                         hint="type more characters of the job id")


class AlreadyDecided(GateError):
    """The job was answered before; a second answer is refused."""

    def __init__(self, job_id: str, status: str, by: str) -> None:
        super().__init__(f"job {job_id[:8]} is already {status} (by {by}); it cannot be answered twice.",
                         hint=f"see it with `duckflow approvals show {job_id[:8]}`")


class JobExpired(GateError):
    """The pending job waited longer than gate.pending_expiry_min and can no longer be answered."""

    def __init__(self, job_id: str) -> None:
        super().__init__(f"job {job_id[:8]} expired before it was answered.",
                         hint="ask the companion to request the operation again")

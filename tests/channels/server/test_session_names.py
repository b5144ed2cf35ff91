"""How `GET /v1/sessions` names a conversation for a person: its request and where it stands, in plain words."""

from __future__ import annotations

from duckflow.channels.http.api import plain_state, session_title


def test_a_session_is_named_by_the_first_line_of_its_request_cut_with_an_ellipsis() -> None:
    assert session_title("Create hello.py\nthat prints a greeting") == "Create hello.py"
    assert session_title("  fix   the   tests  ") == "fix the tests"
    long = session_title("Refactor the parser so that every error names the line it came from")
    assert long == "Refactor the parser so that every error…" and len(long) == 40
    assert session_title("") == "New conversation"


def test_the_state_is_plain_words_never_a_step_name() -> None:
    def state(step: str, status: str, **kw: bool) -> str:
        return plain_state(step, status, **{"pending": False, "busy": False, "started": True, **kw})

    assert state("PLANNING", "IN_PROGRESS", busy=True) == "working"
    assert state("AWAITING_APPROVAL", "REQUIRES_USER_INPUT", pending=True) == "needs your approval"
    assert state("DONE", "SUCCESS") == "done"  # not PLANNING after DONE
    assert state("PLANNING", "REQUIRES_USER_INPUT") == "waiting for your answer"
    assert state("EXECUTION", "ERROR") == "stopped on an error"
    assert state("PLANNING", "IN_PROGRESS") == "paused"
    assert state("PLANNING", "IN_PROGRESS", started=False) == ""

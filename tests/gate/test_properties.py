"""Properties: no auto-approve scope, however drawn, lets a hard-required operation through."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from duckflow.config import GateConfig
from duckflow.gate import AutoApproveScope, Gate, GatePolicy, Operation

NAMES = st.sampled_from(["*", "design", "review", "write_file", "delete_path", "move_path",
                         "delete", "rename", "write", "execute", "docs/", ".", "", "src"])
SCOPES = st.builds(
    AutoApproveScope,
    task_types=st.lists(NAMES, max_size=4).map(tuple),
    tools=st.lists(NAMES, max_size=4).map(tuple),
    paths=st.lists(NAMES, max_size=4).map(tuple),
    deny_operations=st.lists(NAMES, max_size=3).map(tuple),
    max_risk=st.sampled_from(["low", "medium", "high"]),
)
PATHS = st.lists(st.sampled_from(["docs/a.md", "src/x.py", "a", "docs", ".env"]), min_size=1,
                 max_size=3).map(tuple)
HARD_OPS = st.one_of(
    st.builds(Operation, kind=st.sampled_from(["delete", "rename", "move", "push_public",
                                               "send_sensitive", "cost_over_limit"]),
              tool=st.sampled_from(["", "delete_path", "move_path", "write_file"]), paths=PATHS,
              task_type=st.sampled_from([None, "design", "review"])),
    st.builds(Operation, kind=st.sampled_from(["write", "edit", "read", "execute"]), paths=PATHS,
              outside_workspace=st.just(True)),
    st.builds(Operation, kind=st.sampled_from(["write", "create"]), paths=PATHS,
              dangerous_extension=st.just(True)),
    st.builds(Operation, kind=st.sampled_from(["write", "network"]), paths=PATHS,
              sensitive=st.just(True)),
    st.builds(Operation, kind=st.just("write"), paths=PATHS,
              cost_estimate=st.floats(min_value=1.01, max_value=1e6)),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scope=SCOPES, op=HARD_OPS, ttl=st.floats(min_value=0.5, max_value=600))
def test_no_scope_auto_approves_a_hard_required_operation(scope: AutoApproveScope, op: Operation,
                                                          ttl: float) -> None:
    with tempfile.TemporaryDirectory() as d:
        policy = GatePolicy(cost_limit=1.0, require_approval=False)
        with Gate(Path(d) / "gate.db", policy) as gate:
            gate.autoapprove.on(scope, ttl_min=ttl, by="prop")
            out = gate.submit(op)
            assert out.decision == "pending"
            assert out.request is not None and out.request.hard_required


def test_gate_from_config_reads_the_user_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "config.toml"
    db = tmp_path / "elsewhere" / "approvals.db"
    cfg.write_text(f'[gate]\ndb_path = "{db}"\ncost_limit = 0.5\npending_expiry_min = 15\n'
                   'hard_required = ["execute"]\nauto_approve_paths = ["notes/"]\n')
    monkeypatch.setenv("DUCKFLOW_CONFIG", str(cfg))
    with Gate.from_config() as gate:
        assert gate.db_path == db and gate.audit.path == db.with_name("audit.jsonl")
        assert gate.policy.cost_limit == 0.5 and gate.policy.pending_expiry_min == 15
        assert {"execute", "delete"} <= gate.policy.hard_required
        assert AutoApproveScope.defaults(gate.policy).paths == ("notes/",)
        out = gate.submit(Operation("write", paths=("notes/a.md",), cost_estimate=0.75))
        assert out.request is not None and out.request.hard_required == ("cost_over_limit",)
    assert db.exists()


def test_default_config_matches_the_seed_defaults() -> None:
    cfg = GateConfig()
    assert cfg.require_approval is True
    assert cfg.auto_approve.ttl_min == 60
    assert cfg.auto_approve.task_types == ["design", "review"]
    assert cfg.auto_approve.paths == ["docs/"]
    assert cfg.auto_approve.deny_operations == ["delete", "rename", "push_public"]
    assert {"delete", "rename", "send_sensitive", "push_public", "cost_over_limit"} <= set(cfg.hard_required)

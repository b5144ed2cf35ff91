"""The approval gate: risk, approval jobs, decisions and scoped auto-approve (seeds 001, 003).

    from duckflow.gate import Gate, Operation
    gate = Gate()                                   # duckflow_home()/gate.db
    out = gate.submit(Operation("write", tool="write_file", paths=("docs/a.md",)),
                      intent="...", rationale="...", impact="...", alternatives="...",
                      diff_preview=unified_diff("docs/a.md", old, new))
    if out.decision == "pending":
        decision = await gate.wait(out.job_id, timeout=300)
"""

from duckflow.gate.audit import AuditLog
from duckflow.gate.autoapprove import ActiveScope, AutoApprove, AutoApproveScope
from duckflow.gate.diff import cap_diff, unified_diff
from duckflow.gate.errors import AlreadyDecided, AmbiguousJob, GateError, JobExpired, UnknownJob
from duckflow.gate.gate import Gate, default_db_path
from duckflow.gate.guarded import guarded_operation
from duckflow.gate.operation import (
    BUILTIN_HARD_REQUIRED,
    READ_ONLY_KINDS,
    TOOL_KINDS,
    Operation,
    Risk,
    operation_for_tool,
    requires_gate,
    tool_paths,
)
from duckflow.gate.policy import GatePolicy
from duckflow.gate.request import ApprovalRequest, Decision, GateOutcome, Job, JobStatus
from duckflow.gate.risk import Assessment, RiskRule, RiskRules, load_rules

__all__ = [
    "BUILTIN_HARD_REQUIRED",
    "READ_ONLY_KINDS",
    "TOOL_KINDS",
    "ActiveScope",
    "AlreadyDecided",
    "AmbiguousJob",
    "ApprovalRequest",
    "Assessment",
    "AuditLog",
    "AutoApprove",
    "AutoApproveScope",
    "Decision",
    "Gate",
    "GateError",
    "GateOutcome",
    "GatePolicy",
    "Job",
    "JobExpired",
    "JobStatus",
    "Operation",
    "Risk",
    "RiskRule",
    "RiskRules",
    "UnknownJob",
    "cap_diff",
    "default_db_path",
    "guarded_operation",
    "load_rules",
    "operation_for_tool",
    "requires_gate",
    "tool_paths",
    "unified_diff",
]

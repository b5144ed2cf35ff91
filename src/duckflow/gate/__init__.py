"""The approval gate: risk, approval jobs, decisions and scoped auto-approve (seeds 001, 003)."""

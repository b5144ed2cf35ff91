"""Orchestration across roles (Chat, Worker, Coder1-3): loop control and jobs (seed 003)."""

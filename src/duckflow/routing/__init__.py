"""Routing engine: rule router, LLM classifier router and router chains (seeds 003, 004)."""

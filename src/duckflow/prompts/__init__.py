"""Base / Main / Specialized prompt templates and the per-layer token budget (seed 001)."""

"""The coding companion: one conversation with state, transitions and the dual loop (seed 001)."""

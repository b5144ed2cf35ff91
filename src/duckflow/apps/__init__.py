"""Applications built on the engine (SmartAO essay agents)."""

"""Text protocols for model actions: Sym-Ops, DML, JSON replies, and codecs."""

"""SmartAO: the essay agents of seed 004's domain layer, built on the engine.

Coordinator (routing, Draft + Style merge, cost control), DraftAgent (heading-preserving
deepening), StyleAgent (grammar_check → change_map, English and Japanese), RefAgent's corpus
(`refs.RefStore`: SQLite BM25, pgvector), GuardAgent (character-shingle plagiarism check),
EvalAgent (cached rubrics, scores with reasons) and the nightly `apply_reflexion` batch.
"""

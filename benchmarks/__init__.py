"""Benchmarks behind `duckflow bench NAME [--json]`: one module per NAME with main(argv)."""

"""The version of Duckflow, said once (the package face, the CLI and the editor protocol read it)."""

__version__ = "0.1.0"

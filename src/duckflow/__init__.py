"""Duckflow: a local-first, SDK-free agent framework and AI coding companion.

Importing the package is kept cheap: nothing heavy (pydantic, httpx, tiktoken …) is
imported here. Sub-packages are imported by the code that needs them.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]

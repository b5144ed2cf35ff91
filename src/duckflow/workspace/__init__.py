"""The workspace: a path guard and file, shell, test and code-search tools behind it."""

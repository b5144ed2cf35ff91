"""`python -m duckflow` runs the command line."""

from duckflow.channels.cli.main import console

raise SystemExit(console())

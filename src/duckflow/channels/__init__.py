"""People-facing channels: the command line, HTTP, Slack and LINE."""

"""The Slack channel: signed Events API and interactivity endpoints, replies through slack_sdk."""

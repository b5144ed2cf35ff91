"""The LINE channel: a signed webhook, replies by reply token then push, images as files."""

"""The engine core: Agent run/stream, Tool, ToolRegistry, guards, chunks, traces, memory."""

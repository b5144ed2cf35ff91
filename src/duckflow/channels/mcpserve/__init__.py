"""`duckflow mcp serve`: Duckflow's gated workspace and its companion as an MCP server (stdio or
streamable HTTP on 127.0.0.1), for Claude Code, Codex, Cursor or a second Duckflow."""

"""Model adapters (OpenAI-compatible, Anthropic, Ollama, scripted), retry/fallback, tokens."""

"""`duckflow acp`: Duckflow as an Agent Client Protocol agent for editors (Zed, JetBrains, Neovim), over stdio."""

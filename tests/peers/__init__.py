"""Real third-party MCP peer servers for tests: installer, server scripts, harness."""

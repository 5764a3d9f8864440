"""Transports: they move JSON-RPC messages and nothing else (HTTP, stdio, in-memory)."""

"""The sans-I/O core: protocol logic driven by events, with no sockets and no sleeping."""

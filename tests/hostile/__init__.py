"""Fault-injecting servers: HTTP on 127.0.0.1 and misbehaving stdio children."""

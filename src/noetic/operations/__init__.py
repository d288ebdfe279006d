"""Operations: each thing a user can start or read, written once.

The CLI, the MCP tools, the Python API and the dashboard call these functions and only render
what they return. An operation takes plain arguments (ids, names, numbers, paths), opens or
finds what it needs (the store, the session, the provider, the run context) and returns a typed
result; it never prints and never parses a command line.
"""

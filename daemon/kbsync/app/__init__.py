"""Floor 5, the use cases: one function per user action (save a session, write a section, search,
add a board entry, accept a candidate, commit, sync, status, ...), taking plain values and returning
dataclasses or plain data, raising the kbsync.errors hierarchy. No printing, no argparse: every front
door (the command line, the HTTP API, the MCP server) calls these and nothing below them.

May import every floor below it: the root, core, store, git and the features."""

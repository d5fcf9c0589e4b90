"""kbsync: keeps a Markdown memory workspace dependable across machines.

This folder is the root floor: errors (the one error hierarchy and exit codes), config, proc (the one
door for subprocesses) and main (the entry point, which dispatches to the command line). The floors
above it are folders: core, store, git, the features sync, board and retrieval, app, service, and the
front door cli. The root modules import only one another (errors first, which imports nothing);
main alone imports the front doors. docs/architecture.md draws the map.
"""

__version__ = "0.1.0"

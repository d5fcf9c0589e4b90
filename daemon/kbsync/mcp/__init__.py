"""Floor 7, the MCP server (`kbsync mcp`): the assistant's own front door to its memory, over stdio or
mounted as a streamable-HTTP app on the daemon's local server. Its tools, resources and prompts parse
what a client sends, call kbsync.app (the same use cases as the command line) and present the result,
workspace text kept apart from kbsync's own fields and neutralised where the injection detector flags it.

May import kbsync.app, its own folder and the root floor (errors, config); the MCP SDK only here."""

"""Floor 7, the assistant's lifecycle hooks (`kbsync assist`): installing them in an assistant's settings,
and answering them: each hook reads the event the assistant sends as JSON on standard input, calls kbsync.app
(through the daemon's local server when it runs, for speed) and answers on standard output in the assistant's
format. Fast and fail-open: whatever goes wrong, the assistant goes on, with no answer and one log line.

May import kbsync.app, its own folder and the root floor (errors, config); no web or MCP stack."""

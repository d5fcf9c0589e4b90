"""The remote transports of sync, one module each behind the interface in base: plain git (fetch and push
through kbsync.git), and GitHub's Git Database API (githubclient, the HTTP client; github, the transport
that reads and writes objects through it). A new transport is a module here that implements base.Transport.

May import what the sync folder may: the root floor, core, store and git; never board or retrieval."""

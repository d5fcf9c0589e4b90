"""Helpers for kbsync's tests, one module per area: `cli` (the one runner of the real command line),
`core` (workspaces, snapshots, one-line errors), `board`, `daemon` (the real daemon process), `export`,
`hook`, `retrieval`, `retrieval_pg` (a PostgreSQL server for the statistics sidecar), `sync` (bare
remotes, the API spec check), `ghserver` (the GitHub Git Database API test server) and `corpus` (the
benchmark corpus generator, run for real)."""

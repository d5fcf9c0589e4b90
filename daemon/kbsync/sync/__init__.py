"""Floor 4 (a feature): sync with a remote. The integration plan (pure), the merge into the work tree,
the syncer that commits, pulls, integrates and pushes, its state file, and the transports (git, GitHub's
Git Database API).

May import the root floor, core, store and git; never board or retrieval (what two features share moves
down a floor)."""

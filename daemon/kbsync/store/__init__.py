"""Floor 2, the workspace on disk: atomic writes, locks and fingerprints (fsio), the Workspace, the
layout (initws), guarded edits, appends to logs, conflict copies, index.md rebuilds, session saves,
section writes, splits, exports, file repairs and the daemon's status file (daemonstatus).

May import the root floor and core; never git, a feature, app, service or a front door."""

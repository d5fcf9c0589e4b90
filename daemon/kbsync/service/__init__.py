"""Floor 6, the daemon: one process per machine that watches the workspace, repairs each file after
it is written on one worker, runs the timed jobs (commit, sync, scan) and the post-write jobs, keeps its
status file, and renders its systemd units.

May import app and every floor below it; never a front door."""

"""Waiting out the quiet time before a commit, so that a file written a moment ago goes in.

A commit leaves out a file modified less than `[daemon] quiet_ms` ago (it may still be being written).
A commit a person asks for (`kbsync commit`) and the daemon's last commit before it stops would
therefore leave out the file just saved or just repaired; they first wait until every changed file has
been quiet that long, bounded: a file that keeps changing is still left out, as `changing`.
"""

from __future__ import annotations

import time
from typing import Callable

from kbsync.git import repo
from kbsync.store.workspace import Workspace

MIN_BOUND_S = 2.0
MAX_BOUND_S = 5.0  # well inside the daemon's stop grace


def bound(ws: Workspace) -> float:
    """How long a commit waits at most for changed files to go quiet: three quiet times, 2 to 5 s."""
    return min(MAX_BOUND_S, max(MIN_BOUND_S, 3 * ws.config.daemon.quiet_ms / 1000))


def youngest_mtime(ws: Workspace, relpaths: list[str]) -> float:
    """The latest modification time among these files (0 when none exists)."""
    latest = 0.0
    for rel in relpaths:
        try:
            latest = max(latest, ws.path(rel).lstat().st_mtime)
        except OSError:
            continue  # deleted: nothing to wait for
    return latest


def wait_until_quiet(ws: Workspace, limit_s: float, *, now: Callable[[], float] = time.time,
                     sleep: Callable[[float], None] = time.sleep) -> None:
    """Return once every file that differs from HEAD has been quiet for the quiet time, or after `limit_s`."""
    quiet_s = ws.config.daemon.quiet_ms / 1000
    deadline = now() + limit_s
    while True:
        ready_at = youngest_mtime(ws, repo.changed_paths(ws.root)) + quiet_s
        if ready_at <= now() or now() >= deadline:
            return
        sleep(min(ready_at, deadline) - now() + 0.01)

"""The sync state, `.kbsync/sync.json`: the last remote commit integrated or pushed, its tree, where, when.

Written by every sync (the daemon's and `kbsync sync`), read by the next sync
(in API mode that tree is the base of the next integration, and an unmoved
remote costs one request) and by `kbsync status`.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from kbsync.store import fsio
from kbsync.store.workspace import Workspace

STATE_FILE = "sync.json"


def path(ws: Workspace) -> Path:
    return ws.state_dir / STATE_FILE


def load(ws: Workspace) -> dict[str, Any]:
    """The saved state; empty when there is none or it cannot be read."""
    try:
        data = json.loads(path(ws).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def known_remote(ws: Workspace) -> dict[str, str]:
    """{last remote commit: its tree}, so an unmoved remote costs one request."""
    state = load(ws)
    remote, tree = state.get("remote"), state.get("tree")
    return {remote: tree} if isinstance(remote, str) and isinstance(tree, str) else {}


def save(ws: Workspace, where: str, commit: str, tree: str) -> None:
    state = {"where": where, "remote": commit, "tree": tree, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    fsio.atomic_write(path(ws), (json.dumps(state, indent=2) + "\n").encode("utf-8"))

"""The workspace's files that can never be read as content, found by one walk (for `kbsync status`).

FIFOs, sockets, devices, dangling symlinks, files without read permission, folders that cannot be
listed: each is left out of every commit with its reason, and reported here until a person fixes it,
whether or not the daemon runs. Nothing is opened: lstat and access only.
"""

from __future__ import annotations

import os
from pathlib import Path

from kbsync.core import protocol
from kbsync.store import fsio
from kbsync.store.workspace import Workspace


def unreadable_files(ws: Workspace) -> dict[str, str]:
    """relpath -> why, for every entry of the workspace (.git and .kbsync aside) that cannot be read."""
    found: dict[str, str] = {}

    def unlisted(exc: OSError) -> None:
        if exc.filename and not isinstance(exc, FileNotFoundError):
            found[_rel(ws.root, exc.filename)] = f"unreadable folder: {(exc.strerror or str(exc)).lower()}"

    for dirpath, dirnames, filenames in os.walk(ws.root, onerror=unlisted):
        if dirpath == str(ws.root):
            dirnames[:] = [d for d in dirnames if d not in protocol.IGNORED_DIRS]
        for name in [*filenames, *dirnames]:
            why = fsio.unreadable_reason(Path(dirpath, name))
            if why:
                found[_rel(ws.root, os.path.join(dirpath, name))] = why
    return dict(sorted(found.items()))


def _rel(root: Path, path: str) -> str:
    return os.path.relpath(path, root).replace(os.sep, "/")

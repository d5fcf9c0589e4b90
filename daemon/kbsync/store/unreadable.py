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
    """relpath -> why, for every entry of the workspace (.git and .kbsync aside) that cannot be read. A folder's
    listing says which entries are regular files and folders without a look at each; only the others (links,
    FIFOs, sockets, devices) are looked at, and a regular file is asked whether it can be read."""
    found: dict[str, str] = {}
    folders = [str(ws.root)]
    while folders:
        folder = folders.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except FileNotFoundError:
            continue
        except OSError as exc:
            found[_rel(ws.root, folder)] = f"unreadable folder: {(exc.strerror or str(exc)).lower()}"
            continue
        for entry in entries:
            if folder == str(ws.root) and entry.name in protocol.IGNORED_DIRS:
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
                    continue
                regular = entry.is_file(follow_symlinks=False)
            except OSError:
                regular = False
            why = (None if os.access(entry.path, os.R_OK) else "unreadable: permission denied") if regular \
                else fsio.unreadable_reason(Path(entry.path))
            if why:
                found[_rel(ws.root, entry.path)] = why
    return dict(sorted(found.items()))


def _rel(root: Path, path: str) -> str:
    return os.path.relpath(path, root).replace(os.sep, "/")

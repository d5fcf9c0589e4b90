"""The workspace's files that can never be read as content, found from one walk (for `kbsync status`).

FIFOs, sockets, devices, dangling symlinks, files without read permission, folders that cannot be
listed: each is left out of every commit with its reason, and reported here until a person fixes it,
whether or not the daemon runs. Nothing is opened: lstat and access only.
"""

from __future__ import annotations

import os
from pathlib import Path

from kbsync.core import protocol
from kbsync.store import fsio, listings


def unreadable_files(folders: list[listings.Folder]) -> dict[str, str]:
    """relpath -> why, for every entry of a workspace's walked `folders` (.git and .kbsync aside) that cannot be
    read.
    A folder's listing says which entries are regular files and folders without a look at each; only the
    others (links, FIFOs, sockets, devices) are looked at, and a regular file is asked whether it can be read
    (each time: its permissions can change without its folder changing)."""
    found: dict[str, str] = {}
    for folder in folders:
        if folder.error is not None:
            found[folder.rel.rstrip("/") or "."] = f"unreadable folder: {folder.error}"
        for name, kind in folder.entries:
            if kind == listings.DIR or (folder.rel == "" and name in protocol.IGNORED_DIRS):
                continue
            path = folder.path_of(name)
            why = (None if os.access(path, os.R_OK) else "unreadable: permission denied") \
                if kind == listings.FILE else fsio.unreadable_reason(Path(path))
            if why:
                found[folder.rel + name] = why
    return dict(sorted(found.items()))

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
        top = folder.rel == ""
        prefix = folder.path_of("")
        for name in folder.of_kind(listings.FILE):
            if not os.access(prefix + name, os.R_OK) and not (top and name in protocol.IGNORED_DIRS):
                found[folder.rel + name] = "unreadable: permission denied"
        for name in folder.of_kind(listings.LINK) + folder.of_kind(listings.OTHER):
            why = None if top and name in protocol.IGNORED_DIRS else fsio.unreadable_reason(Path(prefix + name))
            if why:
                found[folder.rel + name] = why
    return dict(sorted(found.items()))

"""This machine's short id: six hex digits, made once and kept in `.kbsync/machine-id`.

It names the conflict copies this machine saves (two machines never make the same
name) and is shown by `kbsync status`. The file is runtime state of this machine
only: `.kbsync/` is never committed, so a clone gets an id of its own.
"""

from __future__ import annotations

import contextlib
import os
import secrets

from kbsync.core import protocol
from kbsync.store import fsio
from kbsync.store.workspace import Workspace

MACHINE_FILE = "machine-id"


def machine_id(ws: Workspace) -> str:
    """The id kept in `.kbsync/machine-id`, made (once, race-free) when there is none or it is unreadable."""
    path = ws.state_dir / MACHINE_FILE
    found = _read(ws)
    if found is not None:
        return found
    ws.state_dir.mkdir(parents=True, exist_ok=True)
    new, made = secrets.token_hex(3), fsio.temp_path_for(path)
    fsio.atomic_write(made, (new + "\n").encode("ascii"))
    try:
        os.replace(made, path) if path.exists() else os.link(made, path)  # link: the first writer wins
    except FileExistsError:
        pass
    finally:
        with contextlib.suppress(FileNotFoundError):
            made.unlink()
    return _read(ws) or new


def _read(ws: Workspace) -> str | None:
    """The saved id, or None when it is missing or not six hex digits."""
    try:
        text = (ws.state_dir / MACHINE_FILE).read_text(encoding="ascii").strip()
    except (FileNotFoundError, UnicodeDecodeError):
        return None
    return text if protocol.MACHINE_ID_RE.match(text) else None

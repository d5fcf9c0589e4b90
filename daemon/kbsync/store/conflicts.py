"""Conflict copies: the other version saved beside the file for a person to decide."""

from __future__ import annotations

import time
from pathlib import Path

from kbsync.core import frontmatter, protocol
from kbsync.store import fsio
from kbsync.store.eventlog import log_error
from kbsync.store.machine import machine_id
from kbsync.store.workspace import Workspace


def conflict_text(relpath: str, text: str) -> str:
    """The copy's text: a session copy carries `status: conflict`; other files are kept as they are."""
    if protocol.classify(relpath) == "session":
        return frontmatter.set_field(text.replace("\r\n", "\n"), "status", "conflict")
    return text


def free_conflict_path(ws: Workspace, relpath: str, now: float) -> str:
    """`<stem>.conflict-<UTC>-<machine id>.md` of the original file (never of a copy), `-1`, `-2` … added
    when this machine already made one in that second."""
    stamp, machine = fsio.utc_stamp(now), machine_id(ws)
    candidate = protocol.conflict_name(relpath, stamp, machine)
    n = 1
    while ws.path(candidate).exists():
        candidate = protocol.conflict_name(relpath, stamp, f"{machine}-{n}")
        n += 1
    return candidate


def save_conflict_copy(ws: Workspace, relpath: str, data: bytes, *, other_desc: str, now: float | None = None) -> str:
    """Write `data` (the version that lost the race) as `<stem>.conflict-<UTC>-<machine id>.md`; log it; return
    its path. A copy of a conflict copy is a sibling copy of the original file, never a copy of the copy."""
    t = time.time() if now is None else now
    copy = free_conflict_path(ws, relpath, t)
    try:
        text = data.decode("utf-8")
        out = conflict_text(relpath, text).encode("utf-8")
    except UnicodeDecodeError:
        out = data
    fsio.atomic_write(ws.path(copy), out)
    kept = _mtime_iso(ws.path(relpath))
    log_error(ws, f"conflict: {relpath} (kept, modified {kept}) vs {copy} ({other_desc}, machine {machine_id(ws)}); "
                  "a person decides which to keep", t)
    return copy


def _mtime_iso(path: Path) -> str:
    try:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(path.stat().st_mtime))
    except FileNotFoundError:
        return "missing"

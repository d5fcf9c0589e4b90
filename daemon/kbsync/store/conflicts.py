"""Conflict copies: the other version saved beside the file for a person to decide."""

from __future__ import annotations

import itertools
import os
import time
from pathlib import Path
from typing import Collection, Iterator

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


def conflict_names(ws: Workspace, relpath: str, now: float) -> Iterator[str]:
    """`<stem>.conflict-<UTC>-<machine id>.md` of the original file (never of a copy), then the same with
    `-1`, `-2` … added: the names a copy made in that second may take, in order."""
    stamp, machine = fsio.utc_stamp(now), machine_id(ws)
    yield protocol.conflict_name(relpath, stamp, machine)
    for n in itertools.count(1):
        yield protocol.conflict_name(relpath, stamp, f"{machine}-{n}")


def save_conflict_copy(ws: Workspace, relpath: str, data: bytes, *, other_desc: str, now: float | None = None,
                       taken: Collection[str] = ()) -> str:
    """Write `data` (the version that lost the race) as `<stem>.conflict-<UTC>-<machine id>.md`; log it; return
    its path. A copy of a conflict copy is a sibling copy of the original file, never a copy of the copy.

    The names are predictable (a remote can ship files named like this machine's future copies), so the name is
    the first one free on the disk and not among `taken`: the paths the caller is about to write (a sync passes
    every path of the remote's tree and of its pending writes). The copy is created, never written over a file
    that appeared meanwhile (kbsync.store.fsio.create_new): a copy never replaces a file, and a file that
    appears on a copy's name after it is made is another file's business."""
    t = time.time() if now is None else now
    try:
        text = data.decode("utf-8")
        out = conflict_text(relpath, text).encode("utf-8")
    except UnicodeDecodeError:
        out = data
    for copy in conflict_names(ws, relpath, t):
        if copy in taken or os.path.lexists(ws.path(copy)):
            continue
        try:
            fsio.create_new(ws.path(copy), out)
        except FileExistsError:
            continue
        break
    kept = _mtime_iso(ws.path(relpath))
    log_error(ws, f"conflict: {relpath} (kept, modified {kept}) vs {copy} ({other_desc}, machine {machine_id(ws)}); "
                  "a person decides which to keep", t)
    return copy


def _mtime_iso(path: Path) -> str:
    try:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(path.stat().st_mtime))
    except FileNotFoundError:
        return "missing"

"""The daemon's status file, `.kbsync/status.json`: one typed record (DaemonStatus) that the daemon rewrites
atomically as it works and `kbsync status` reads. It holds only what the daemon alone knows (its queue, its
last event, repair, scan and commit, its jobs, the files it left out and why); whether the daemon still runs
is decided from the workspace lock, never from this file.

A file that cannot be read, or is no JSON object, reads as an empty record (logged); a field of the wrong
type reads as its default, so a hand-edited or half-foreign file cannot break `kbsync status`."""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kbsync.store import fsio

log = logging.getLogger(__name__)

STATUS_FILE = ".kbsync/status.json"
PENDING_SHOWN = 200  # the pending paths the file lists (pending_count counts them all)


@dataclass
class DaemonStatus:
    pid: int | None = None
    updated: str | None = None  # when the daemon last wrote the file (`stamp`)
    last_scan_ns: int = 0  # when the last catch-up scan started (files older than this were checked)
    last_event: dict[str, str] | None = None  # {"path", "time"}: the last change the watcher saw
    last_repair: dict[str, Any] | None = None  # {"path", "time", "fixes"}
    last_commit: dict[str, Any] | None = None  # {"sha", "time", "message"}
    jobs: dict[str, dict[str, Any]] = field(default_factory=dict)  # timed job -> {"time", "ok", "result"}
    skipped: dict[str, str] = field(default_factory=dict)  # path -> why the daemon left it out
    pending: list[str] = field(default_factory=list)  # the first PENDING_SHOWN paths waiting to be checked
    pending_count: int = 0

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def of(cls, data: object) -> DaemonStatus:
        """The record `data` (the file's JSON) holds: each field of the right type, the others their default."""
        if not isinstance(data, dict):
            return cls()
        kept: dict[str, Any] = {name: value for name, kind in _TYPES.items()
                                if isinstance(value := data.get(name), kind) and not isinstance(value, bool)}
        return cls(**kept)


_TYPES: dict[str, type] = {"pid": int, "updated": str, "last_scan_ns": int, "last_event": dict, "last_repair": dict,
                           "last_commit": dict, "jobs": dict, "skipped": dict, "pending": list, "pending_count": int}


def status_path(root: Path) -> Path:
    return root / STATUS_FILE


def read(root: Path) -> DaemonStatus:
    """The last status the daemon wrote in the workspace at `root`; an empty record if there is none (or it
    cannot be read)."""
    try:
        data = json.loads(status_path(root).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return DaemonStatus()
    except (OSError, ValueError) as exc:
        log.warning("%s: unreadable (%s); ignoring it", STATUS_FILE, exc)
        return DaemonStatus()
    return DaemonStatus.of(data)


def write(root: Path, status: DaemonStatus) -> None:
    fsio.atomic_write(status_path(root), json.dumps(status.as_dict(), ensure_ascii=False, indent=1).encode("utf-8"))


def stamp(now: float | None = None) -> str:
    """An ISO 8601 UTC time for the status file."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now if now is not None else time.time()))

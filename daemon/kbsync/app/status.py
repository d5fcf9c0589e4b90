"""The daemon's status file (.kbsync/status.json) and the report `kbsync status` prints.

The daemon rewrites the file atomically as it works; any other process reads
it. Whether the daemon still runs is decided from the workspace lock (its pid
alive on this host), never from the file alone.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

from kbsync.store import fsio
from kbsync.core import protocol
from kbsync.sync import state as syncstate
from kbsync.store.workspace import Workspace

log = logging.getLogger(__name__)

STATUS_FILE = ".kbsync/status.json"


def status_path(ws: Workspace) -> Path:
    return ws.root / STATUS_FILE


def lock_target(ws: Workspace) -> Path:
    """The path whose `.lock` is the workspace lock (`.kbsync/workspace.lock`)."""
    return ws.root / protocol.WORKSPACE_LOCK.removesuffix(protocol.LOCK_SUFFIX)


def read_status(ws: Workspace) -> dict[str, Any]:
    """The last status the daemon wrote, or {} if there is none (or it cannot be read)."""
    try:
        data = json.loads(status_path(ws).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("%s: unreadable (%s); ignoring it", STATUS_FILE, exc)
        return {}
    return data if isinstance(data, dict) else {}


def write_status(ws: Workspace, data: dict[str, Any]) -> None:
    fsio.atomic_write(status_path(ws), json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8"))


def daemon_pid(ws: Workspace) -> int | None:
    """The pid of the daemon holding the workspace lock, if one is running."""
    target = lock_target(ws)
    if not fsio.lock_held(target):
        return None
    try:
        return int(json.loads(fsio.lock_path(target).read_text(encoding="utf-8"))["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


LEFTOVER_AGE_S = 60.0  # a temp file this old is no write in progress: its writer was stopped


def waiting_files(ws: Workspace, now: float | None = None) -> tuple[list[str], list[str]]:
    """From one walk of the workspace: the conflict copies waiting for a person, and the temp files that
    interrupted writes left behind (kbsync never deletes them: see docs/protocol.md)."""
    limit = (time.time() if now is None else now) - LEFTOVER_AGE_S
    copies, found = [], []
    for rel in ws.iter_files(suffix=(".md", fsio.TEMP_SUFFIX)):
        if not rel.endswith(fsio.TEMP_SUFFIX):
            if protocol.is_conflict_copy(rel):
                copies.append(rel)
            continue
        try:
            if ws.path(rel).stat().st_mtime < limit:
                found.append(rel)
        except FileNotFoundError:
            pass  # the write it belonged to finished meanwhile
    return copies, found


def report(ws: Workspace) -> dict[str, Any]:
    """Everything `kbsync status` shows, from the status file, the lock and the workspace."""
    saved = read_status(ws)
    pid = daemon_pid(ws)
    copies, leftovers = waiting_files(ws)
    return {
        "workspace": str(ws.root),
        "running": pid is not None,
        "pid": pid,
        "updated": saved.get("updated"),
        "last_event": saved.get("last_event"),
        "last_repair": saved.get("last_repair"),
        "last_commit": saved.get("last_commit"),
        "pending": saved.get("pending", []) if pid else [],
        "skipped": saved.get("skipped", {}),
        "conflicts": copies,
        "leftovers": leftovers,
        "last_sync": last_sync(saved.get("jobs", {}).get("sync"), syncstate.load(ws)),
        "jobs": saved.get("jobs", {}),
        "flagged": flagged_records(ws),
    }


def flagged_records(ws: Workspace) -> list[dict[str, Any]]:
    """Indexed records that carry an embedded instruction: path, key and families (from the search index)."""
    from kbsync.retrieval.index import flagged

    return [{"path": r.relpath, "key": r.key, "families": r.families} for r in flagged(ws)]


PERSON_REASONS = ("invalid", "secret")  # why a file left out waits for a person (locked, changing: it waits for time)


def waiting_for_a_person(rep: dict[str, Any]) -> list[str]:
    """The conflict copies, the files left out as invalid or holding a secret, and the temp files interrupted
    writes left: what no waiting fixes."""
    return [*rep["conflicts"], *(p for p, why in sorted(rep["skipped"].items()) if why.startswith(PERSON_REASONS)),
            *rep.get("leftovers", [])]


def last_sync(job: dict[str, Any] | None, state: dict[str, Any]) -> dict[str, Any] | None:
    """The daemon's last sync job, or a sync any process completed later (`kbsync sync`, from sync.json)."""
    at, remote = state.get("at"), state.get("remote")
    if not (isinstance(at, str) and isinstance(remote, str)) or (job and str(job.get("time", "")) >= at):
        return job
    return {"time": at, "ok": True, "result": f"synced with {state.get('where', 'the remote')} at {remote[:7]}"}


def _when(item: dict[str, Any] | None, key: str) -> str:
    if not item:
        return "none"
    return f"{item.get(key, '')} at {item.get('time', '?')}"


def render(rep: dict[str, Any]) -> str:
    """The human-readable form of a report."""
    lines = [
        f"workspace:   {rep['workspace']}",
        f"daemon:      running (pid {rep['pid']})" if rep["running"] else "daemon:      not running",
        f"last event:  {_when(rep['last_event'], 'path')}",
        f"last repair: {_when(rep['last_repair'], 'path')}",
        f"last commit: {_when(rep['last_commit'], 'sha')}",
        f"last sync:   {_when(rep['last_sync'], 'result')}",
        f"pending:     {len(rep['pending'])} file(s)",
    ]
    lines += [f"  {p}" for p in rep["pending"][:20]]
    lines.append(f"skipped:     {len(rep['skipped'])} file(s)")
    lines += [f"  {p}: {why}" for p, why in sorted(rep["skipped"].items())]
    lines.append(f"flagged:     {len(rep['flagged'])} indexed record(s) carry an embedded instruction")
    lines += [f"  {f['key']}: {', '.join(f['families'])}" for f in rep["flagged"]]
    lines.append(f"conflicts:   {len(rep['conflicts'])} waiting for a person")
    lines += [f"  {p}" for p in rep["conflicts"]]
    if rep["leftovers"]:
        lines.append(f"temp files:  {len(rep['leftovers'])} left by interrupted writes; look at them, then delete "
                     "them by hand")
        lines += [f"  {p}" for p in rep["leftovers"]]
    return "\n".join(lines)


def stamp(now: float | None = None) -> str:
    """An ISO 8601 UTC time for the status file."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now if now is not None else time.time()))

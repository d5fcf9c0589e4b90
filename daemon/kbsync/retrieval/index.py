"""Keeping the derived search database in step with the files: full rebuild, per-file update, catch-up.

The daemon calls `update(ws, relpaths)` after each processed write (a rename is
the old path and the new one); `rebuild(ws)` is `kbsync index rebuild --search`;
`refresh(ws)` re-reads only the files whose mtime or size differ from what was
indexed. Conflict copies are not indexed (a person resolves them first).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from kbsync.core import protocol
from kbsync.store import fsio
from kbsync.retrieval import db as searchdb
from kbsync.errors import InputError
from kbsync.retrieval.db import FileState
from kbsync.retrieval.records import Record, flags_of, plain_record, records_for
from kbsync.store.workspace import Workspace, decode, left_out, left_out_reason

log = logging.getLogger(__name__)
INDEXED_KINDS = ("session", "board", "memory", "artifact")


@dataclass(frozen=True)
class BuildResult:
    files: int
    records: int
    broken: int


def indexable(relpath: str) -> bool:
    return protocol.classify(relpath) in INDEXED_KINDS and not protocol.is_conflict_copy(relpath)


def open_index(ws: Workspace) -> searchdb.Connection:
    """The workspace's search database, built first if it does not exist yet."""
    build_missing(ws)
    return searchdb.connect(searchdb.db_path(ws.state_dir))


def build_missing(ws: Workspace) -> bool:
    """Build the index if there is none, one process at a time (True if this one built it): processes that
    start together on a fresh workspace (several `kbsync mcp`, the daemon) must not swap a database in
    under one another's open connections."""
    path = searchdb.db_path(ws.state_dir)
    if path.exists():
        return False
    cfg = ws.config.daemon
    with fsio.locked(path, ttl_s=cfg.lock_ttl_s, wait_s=max(cfg.lock_wait_s, 60.0)):
        if path.exists():
            return False
        rebuild(ws)
        return True


def rebuild(ws: Workspace) -> BuildResult:
    """Build the whole index from the files into a new database and swap it in."""
    final = searchdb.db_path(ws.state_dir)
    tmp = final.with_name(f"{final.name}.{os.getpid()}.tmp")  # two builders never share one
    conn = searchdb.new_database(tmp)
    try:
        with searchdb.transaction(conn):
            result = _load_all(conn, ws)
    except BaseException:
        conn.close()
        tmp.unlink(missing_ok=True)  # our own half-built copy; the live index is untouched
        raise
    conn.close()
    searchdb.swap_in(tmp, final)
    return result


def _load_all(conn: searchdb.Connection, ws: Workspace) -> BuildResult:
    files = records = broken = 0
    for relpath in ws.iter_files():
        got = _index_one(conn, ws, relpath, fresh=True)
        if got is not None:
            files += 1
            records += len(got)
            broken += sum(1 for r in got if r.broken)
    return BuildResult(files, records, broken)


def update(ws: Workspace, relpaths: Iterable[str]) -> int:
    """Re-index these files (added, changed, deleted or renamed); the number of files now indexed among them."""
    relpaths = list(relpaths)
    if build_missing(ws):  # never leave a partial index behind: the first update builds it all
        return sum(1 for rp in relpaths if indexable(rp) and ws.path(rp).is_file())
    conn = searchdb.connect(searchdb.db_path(ws.state_dir))
    try:
        return sum(searchdb.in_chunks(conn, relpaths, lambda rp: _reindex(conn, ws, rp)))
    finally:
        conn.close()


def flagged(ws: Workspace) -> list[searchdb.Row]:
    """The indexed records of the workspace that carry an embedded-instruction flag, as last indexed (none when
    the index has not been built yet; reading it never builds it)."""
    path = searchdb.db_path(ws.state_dir)
    if not path.exists():
        return []
    conn = searchdb.connect(path)
    try:
        return searchdb.flagged(conn)
    finally:
        conn.close()


def refresh(ws: Workspace) -> int:
    """Catch up with edits the daemon did not see: the number of files re-read or dropped."""
    conn = open_index(ws)
    try:
        known = searchdb.indexed_files(conn)
        current = current_states(ws)
        stale = [rp for rp, st in current.items() if known.get(rp) != st] + [rp for rp in known if rp not in current]
        searchdb.in_chunks(conn, stale, lambda rp: _index_one(conn, ws, rp))
        return len(stale)
    finally:
        conn.close()


def _reindex(conn: searchdb.Connection, ws: Workspace, relpath: str) -> bool:
    """Index one file the daemon saw change (True if it is indexed now). One indexed at its current mtime and
    size is left as it is, as `refresh` judges it: the daemon's first catch-up hands over every file of the
    workspace just after the index was built from them."""
    path = ws.path(relpath)
    try:
        if indexable(relpath) and not left_out(path) and searchdb.indexed_state(conn, relpath) == _state(path):
            return True
    except OSError:
        pass  # gone or unreadable: _index_one drops it
    return _index_one(conn, ws, relpath) is not None


def _index_one(conn: searchdb.Connection, ws: Workspace, relpath: str, *, fresh: bool = False) -> list[Record] | None:
    """Index one file (or drop it when it is gone or not indexable); its records, None when dropped."""
    path = ws.path(relpath)
    if not indexable(relpath) or left_out(path) or not path.is_file():
        searchdb.drop_file(conn, relpath)
        return None
    try:
        text = ws.read_text(relpath)
        state = _state(path)
    except (InputError, OSError) as exc:
        log.warning("search index: %s left out: %s", relpath, exc)
        searchdb.drop_file(conn, relpath)
        return None
    got = records_for(relpath, text, ws.config.protocol.default_offset)
    searchdb.put_file(conn, relpath, state, got, fresh=fresh)
    return got


def current_states(ws: Workspace) -> dict[str, FileState]:
    """The indexable files on disk now with their modification time and size, one lstat each: a symlink is
    left out (as `left_out` says), and so is a file gone since the folder was listed."""
    out: dict[str, FileState] = {}
    for rp, entry in ws.scan():
        if not indexable(rp):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue
        if left_out_reason(st) is None:
            out[rp] = FileState(st.st_mtime_ns, st.st_size)
    return out


def _state(path: Path) -> FileState:
    st = path.stat()
    return FileState(st.st_mtime_ns, st.st_size)


# ---- folders of Markdown outside the workspace ----------------------------------

def folder_kind(name: str) -> str:
    return f"folder:{name}"


def sync_folder(conn: searchdb.Connection, name: str, root: Path) -> None:
    """Bring the index of an outside folder of Markdown up to date (files keyed `name:relpath`)."""
    prefix = f"{name}:"
    known = searchdb.indexed_files(conn, prefix)
    current = {prefix + rp: _state(root / rp) for rp in _markdown_under(root)}
    stale = [k for k, st in current.items() if known.get(k) != st] + [k for k in known if k not in current]
    searchdb.in_chunks(conn, stale, lambda key: _index_folder_file(conn, name, root, key))


def _index_folder_file(conn: searchdb.Connection, name: str, root: Path, key: str) -> None:
    rel = key.split(":", 1)[1]
    path = root / rel
    try:
        data, state = path.read_bytes(), _state(path)
        text = decode(data, str(path))
    except FileNotFoundError:
        searchdb.drop_file(conn, key)
        return
    except (InputError, OSError) as exc:
        log.warning("search source %s: %s left out: %s", name, path, exc)
        searchdb.drop_file(conn, key)
        return
    rec = plain_record(rel, text, folder_kind(name))
    searchdb.put_file(conn, key, state, [Record(key=key, relpath=key, kind=rec.kind, title=rec.title,
                                                summary=rec.summary, body=rec.body, date=rec.date,
                                                flags=flags_of(text))])


def _markdown_under(root: Path) -> list[str]:
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        rel = os.path.relpath(dirpath, root)
        for f in filenames:
            if f.endswith(".md"):
                found.append(f if rel == "." else f"{rel}/{f}".replace(os.sep, "/"))
    return sorted(found)


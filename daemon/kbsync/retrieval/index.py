"""Keeping the derived search database in step with the files: full rebuild, per-file update, catch-up.

The daemon calls `update(ws, relpaths)` after each processed write (a rename is
the old path and the new one); `rebuild(ws)` is `kbsync index rebuild --search`;
`refresh(ws)` re-reads only the files whose mtime or size differ from what was
indexed. Conflict copies are not indexed (a person resolves them first). A
rebuild prepares the files' rows (parsing, bigrams, the embedded-instruction
flags) in worker processes over every core, in batches, and this process
writes them in the files' order, so a rebuild gives the same database as a
serial run. `bodies(ws)` reads the records' bodies back from the files, for
the matches the index cannot confirm alone.
"""

from __future__ import annotations

import functools
import logging
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from kbsync import allocator, parallel
from kbsync.core import protocol
from kbsync.errors import InputError, KbsyncError
from kbsync.retrieval import db
from kbsync.retrieval.db import FileState
from kbsync.retrieval.records import Record, flags_of, plain_record, records_for
from kbsync.store import fsio
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


def open_index(ws: Workspace) -> db.Connection:
    """The workspace's search database, built first if it does not exist yet or is of an older layout."""
    build_missing(ws)
    return db.connect(db.db_path(ws.state_dir))


def build_missing(ws: Workspace) -> bool:
    """Build the index if there is none or it is of an older layout (an upgrade of kbsync), one process at a
    time (True if this one built it): processes that start together on a fresh workspace (several `kbsync
    mcp`, the daemon) must not swap a database in under one another's open connections."""
    path = db.db_path(ws.state_dir)
    if not db.needs_build(path):
        return False
    cfg = ws.config.daemon
    with fsio.locked(path, ttl_s=cfg.lock_ttl_s, wait_s=max(cfg.lock_wait_s, 60.0)):
        if not db.needs_build(path):
            return False
        rebuild(ws)
        return True


def rebuild(ws: Workspace) -> BuildResult:
    """Build the whole index from the files into a new database and swap it in."""
    final = db.db_path(ws.state_dir)
    _sweep(final)
    tmp = final.with_name(f"{final.name}.{os.getpid()}.tmp")  # two builders never share one
    conn = db.new_database(tmp)
    try:
        with db.transaction(conn):
            result = _load_all(conn, ws)
            db.finish(conn)
    except BaseException:
        conn.close()
        tmp.unlink(missing_ok=True)  # our own half-built copy; the live index is untouched
        raise
    conn.close()
    allocator.release()  # the build's page cache and full-text buffer, freed in small blocks: a daemon would keep them
    db.swap_in(tmp, final)
    return result


def _sweep(final: Path) -> None:
    """Delete what a build killed before its end left beside the live index (its half-built copy, named
    after a process that no longer runs); a copy of a build still running is left to it."""
    for left in final.parent.glob(f"{final.name}.*.tmp*"):
        pid = left.name[len(final.name) + 1:].split(".", 1)[0]
        if pid.isdigit() and not fsio.pid_alive(int(pid)):
            left.unlink(missing_ok=True)


def _load_all(conn: db.Connection, ws: Workspace) -> BuildResult:
    done = BuildResult(0, 0, 0)
    waiting: list[db.Prepared] = []
    for _, got in parallel.batches(functools.partial(_prepare_batch, ws), ws.iter_files(), size=BUILD_BATCH):
        for why in (g for g in got if isinstance(g, str)):
            log.warning("search index: %s", why)
        waiting += [g for g in got if isinstance(g, db.Prepared)]
        if len(waiting) >= BUILD_BATCH:  # in this process the files come one by one: written a batch at a time
            done, waiting = _write(conn, waiting, done), []
    return _write(conn, waiting, done)


def _write(conn: db.Connection, files: list[db.Prepared], done: BuildResult) -> BuildResult:
    db.put_rows(conn, files)
    return BuildResult(done.files + len(files), done.records + sum(len(f.docs) for f in files),
                       done.broken + sum(f.broken for f in files))


BUILD_BATCH = 100  # files a worker prepares at a time


def _prepare_batch(ws: Workspace, relpaths: list[str]) -> list[db.Prepared | str | None]:
    """The rows of each file (in a worker process): a file not indexed is None, one that cannot be read the
    reason it is left out."""
    return [_prepare(ws, rp) for rp in relpaths]


def _prepare(ws: Workspace, relpath: str) -> db.Prepared | str | None:
    got = _read(ws, relpath)
    if not isinstance(got, tuple):
        return got
    text, state = got
    return db.prepared(relpath, state, records_for(relpath, text, ws.config.protocol.default_offset))


def _read(ws: Workspace, relpath: str) -> tuple[str, FileState] | str | None:
    """A file's text and state; None when it is not indexed (a symlink, gone, no regular file), the reason it is
    left out when it cannot be read. The state is taken before the text is read: a file changed in between
    is one that the index holds older than it is, which the next catch-up re-reads."""
    if not indexable(relpath):
        return None
    try:
        st = os.lstat(ws.path(relpath))
        if left_out_reason(st) or not stat.S_ISREG(st.st_mode):
            return None
        return ws.read_text(relpath), FileState(st.st_mtime_ns, st.st_size)
    except FileNotFoundError:
        return None
    except (InputError, OSError) as exc:
        return f"{relpath} left out: {exc}"


def update(ws: Workspace, relpaths: Iterable[str]) -> int:
    """Re-index these files (added, changed, deleted or renamed); the number of files now indexed among them.
    One indexed at its current mtime and size is left as it is, as `refresh` judges it: the daemon's first
    catch-up hands over every file of the workspace just after the index was built from them."""
    relpaths = list(dict.fromkeys(relpaths))  # a path given twice is indexed once
    if build_missing(ws):  # never leave a partial index behind: the first update builds it all
        return sum(1 for rp in relpaths if indexable(rp) and ws.path(rp).is_file())
    conn = db.connect(db.db_path(ws.state_dir))
    try:
        current = {rp for rp in relpaths if _indexed_now(conn, ws, rp)}
        return len(current) + _index_many(conn, ws, [rp for rp in relpaths if rp not in current])
    finally:
        conn.close()


def written(ws: Workspace, relpaths: Iterable[str]) -> None:
    """Re-index files kbsync itself just wrote (a save through the CLI, HTTP or MCP), so that a search made when
    the call returns finds them, without waiting for the daemon. Only an index that exists is updated (a missing
    one is built from the files, these included, by the next search); a failure is logged, never raised: the
    write has happened, and the daemon indexes the file again after its quiet time."""
    if db.needs_build(db.db_path(ws.state_dir)):
        return
    try:
        update(ws, relpaths)
    except (KbsyncError, db.Error, OSError) as exc:
        log.warning("search index: %s not indexed yet (%s); the daemon will index it", ", ".join(relpaths), exc)


def session_statuses(ws: Workspace) -> dict[str, tuple[str, int, int, str]]:
    """relpath -> (relpath, its mtime_ns and size when indexed, its `status`), for every indexed session whose
    frontmatter could be read ({} when the index has not been built yet or is of an older layout; reading it
    never builds it)."""
    path = db.db_path(ws.state_dir)
    if db.needs_build(path):
        return {}
    conn = db.connect(path)
    try:
        return db.indexed_statuses(conn, "session")
    finally:
        conn.close()


def flagged(ws: Workspace) -> list[db.Row]:
    """The indexed records of the workspace that carry an embedded-instruction flag, as last indexed (none when
    the index has not been built yet or is of an older layout; reading it never builds it)."""
    path = db.db_path(ws.state_dir)
    if db.needs_build(path):
        return []
    conn = db.connect(path)
    try:
        return db.flagged(conn)
    finally:
        conn.close()


def _go_on() -> None:
    """Between two steps of a catch-up that nothing else waits for."""


STEP_FILES = 256  # files a catch-up looks at between two calls of its `between` (a few milliseconds)


def refresh(ws: Workspace, between: Callable[[], None] = _go_on) -> int:
    """Catch up with edits the daemon did not see: the number of files re-read or dropped. `between` is called
    every STEP_FILES files looked at and before each batch re-read (a background catch-up waits there while
    answers are made)."""
    conn = open_index(ws)
    try:
        known = db.indexed_files(conn)
        current = current_states(ws, between)
        stale = [rp for rp, st in current.items() if known.get(rp) != st] + [rp for rp in known if rp not in current]
        _index_many(conn, ws, stale, between)
        return len(stale)
    finally:
        conn.close()


def _indexed_now(conn: db.Connection, ws: Workspace, relpath: str) -> bool:
    path = ws.path(relpath)
    try:
        return indexable(relpath) and not left_out(path) and db.indexed_state(conn, relpath) == _state(path)
    except OSError:
        return False  # gone or unreadable: _index_many drops it


def _index_many(conn: db.Connection, ws: Workspace, relpaths: list[str],
                between: Callable[[], None] = _go_on) -> int:
    """Index these files (or drop those gone or not indexable); the number indexed now. They are read and
    prepared outside the write transactions, over every core when there are many (a pull of thousands), and
    written CHUNK_FILES of them to a transaction (see `db.in_chunks`)."""
    indexed = 0
    ready: list[tuple[str, db.Prepared | str | None]] = []
    for batch, got in parallel.batches(functools.partial(_prepare_batch, ws), relpaths, size=BUILD_BATCH):
        between()
        ready += zip(batch, got)
        if len(ready) >= db.CHUNK_FILES:
            indexed, ready = indexed + _write_prepared(conn, ready), []
    return indexed + _write_prepared(conn, ready)


def _write_prepared(conn: db.Connection, ready: list[tuple[str, db.Prepared | str | None]]) -> int:
    """Replace what the index holds of each file with its prepared rows, in one transaction; the number of files
    with rows (one that could not be read is dropped, and the reason logged)."""
    for why in (g for _, g in ready if isinstance(g, str)):
        log.warning("search index: %s", why)
    files = [g for _, g in ready if isinstance(g, db.Prepared)]
    if ready:
        with db.transaction(conn):
            for relpath, _ in ready:
                db.drop_file(conn, relpath)
            db.put_rows(conn, files)
    return len(files)


def bodies(ws: Workspace) -> db.Bodies:
    """Reads the bodies of workspace records from their files as they are now (a file that is gone, not
    indexable or unreadable gives none; one edited since it was indexed gives its records as they read now).
    The board's are kept between calls while the file's mtime and size stay the same: it is one file of
    thousands of entries, and a search ranks some of them by their text each time."""
    def read(rows: list[db.Row]) -> dict[str, str]:
        out: dict[str, str] = {}
        for relpath in dict.fromkeys(r.relpath for r in rows):
            out.update(_bodies_of(ws, relpath))
        return out
    return read


_BOARD_BODIES: dict[Path, tuple[FileState, dict[str, str]]] = {}


def _bodies_of(ws: Workspace, relpath: str) -> dict[str, str]:
    board = relpath == protocol.BOARD_MD
    if board:
        try:
            state = _state(ws.path(relpath))
        except OSError:
            return {}
        kept = _BOARD_BODIES.get(ws.path(relpath))
        if kept and kept[0] == state:
            return kept[1]
    got = _read(ws, relpath)
    if not isinstance(got, tuple):
        return {}
    recs = records_for(relpath, got[0], ws.config.protocol.default_offset, flagged=False)
    out = {r.key: r.body for r in recs}
    if board:
        _BOARD_BODIES.clear()  # one board kept, the last read
        _BOARD_BODIES[ws.path(relpath)] = (got[1], out)
    return out


def current_states(ws: Workspace, between: Callable[[], None] = _go_on) -> dict[str, FileState]:
    """The indexable files on disk now with their modification time and size, one lstat each: a symlink is
    left out (as `left_out` says), and so is a file gone since the folder was listed. `between` is called
    every STEP_FILES files."""
    out: dict[str, FileState] = {}
    for n, (rp, entry) in enumerate(ws.scan(), 1):
        if not n % STEP_FILES:
            between()
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


def sync_folder(conn: db.Connection, name: str, root: Path) -> None:
    """Bring the index of an outside folder of Markdown up to date (files keyed `name:relpath`)."""
    prefix = f"{name}:"
    known = db.indexed_files(conn, prefix)
    current = {prefix + rp: _state(root / rp) for rp in _markdown_under(root)}
    stale = [k for k, st in current.items() if known.get(k) != st] + [k for k in known if k not in current]
    db.in_chunks(conn, stale, lambda key: _index_folder_file(conn, name, root, key))


def _index_folder_file(conn: db.Connection, name: str, root: Path, key: str) -> None:
    rel = key.split(":", 1)[1]
    path = root / rel
    try:
        data, state = path.read_bytes(), _state(path)
        text = decode(data, str(path))
    except FileNotFoundError:
        db.drop_file(conn, key)
        return
    except (InputError, OSError) as exc:
        log.warning("search source %s: %s left out: %s", name, path, exc)
        db.drop_file(conn, key)
        return
    rec = plain_record(rel, text, folder_kind(name))
    db.put_file(conn, key, state, [Record(key=key, relpath=key, kind=rec.kind, title=rec.title,
                                                summary=rec.summary, body=rec.body, date=rec.date,
                                                flags=flags_of(text))])


def folder_bodies(root: Path) -> db.Bodies:
    """Reads the bodies of an outside folder's records (keyed `name:relpath`; a document's body is its text)
    from its files as they are now."""
    def read(rows: list[db.Row]) -> dict[str, str]:
        out: dict[str, str] = {}
        for r in rows:
            try:
                out[r.key] = decode((root / r.key.split(":", 1)[1]).read_bytes(), r.key)
            except (InputError, OSError):
                continue
        return out
    return read


def _markdown_under(root: Path) -> list[str]:
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        rel = os.path.relpath(dirpath, root)
        for f in filenames:
            if f.endswith(".md"):
                found.append(f if rel == "." else f"{rel}/{f}".replace(os.sep, "/"))
    return sorted(found)


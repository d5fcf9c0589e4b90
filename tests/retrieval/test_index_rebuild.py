"""A rebuild of the search index: killed half way, it leaves the index it was replacing (or none), never a
half-built one; what it builds holds the keys, totals and triggers the updates rely on."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from helpers.retrieval import keys, make_workspace
from kbsync.retrieval import db, index
from kbsync.store.workspace import Workspace


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _killed_mid_build(root: Path) -> None:
    """Start `kbsync index rebuild --search` and kill it (and its workers) once its new database exists."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KBSYNC_")}
    proc = subprocess.Popen([sys.executable, "-m", "kbsync", "-w", str(root), "index", "rebuild", "--search"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    state = root / ".kbsync"
    deadline = time.monotonic() + 60
    while not list(state.glob(f"{db.DB_NAME}.*.tmp")) and time.monotonic() < deadline:
        assert proc.poll() is None, "the rebuild ended before it could be killed"
        time.sleep(0.005)
    os.killpg(proc.pid, signal.SIGKILL)
    assert proc.wait(10) == -signal.SIGKILL


def test_a_rebuild_killed_half_way_leaves_the_index_it_was_replacing(tmp_path: Path) -> None:
    make_workspace(tmp_path, noise=600)  # past parallel.MIN_PARALLEL files: a pool of workers is killed too
    ws = Workspace(tmp_path)
    index.rebuild(ws)
    live = db.db_path(ws.state_dir)
    before, found = _digest(live), keys(ws, "合同")
    _killed_mid_build(tmp_path)
    assert _digest(live) == before and keys(ws, "合同") == found
    assert list(ws.state_dir.glob("*.tmp*"))  # the half-built copy, beside it, never in its place
    index.rebuild(ws)
    assert not list(ws.state_dir.glob("*.tmp*"))  # the next build deleted what the killed one left
    assert keys(ws, "合同") == found


def test_a_first_build_killed_half_way_leaves_no_index(tmp_path: Path) -> None:
    make_workspace(tmp_path, noise=600)
    _killed_mid_build(tmp_path)
    ws = Workspace(tmp_path)
    assert not db.db_path(ws.state_dir).exists()
    assert keys(ws, "合同")  # the next search builds it whole


def test_a_rebuilt_database_holds_the_keys_and_totals_of_a_new_one(tmp_path: Path) -> None:
    make_workspace(tmp_path, noise=20)
    ws = Workspace(tmp_path)
    index.rebuild(ws)
    conn = db.connect(db.db_path(ws.state_dir))
    fresh = db.connect(tmp_path / "fresh.sqlite")
    try:
        def layout(c: db.Connection) -> list[tuple[str, str]]:
            return c.execute("SELECT type, name FROM sqlite_master ORDER BY type, name").fetchall()

        assert layout(conn) == layout(fresh)
        counted = conn.execute("SELECT count(*), sum(n) FROM lengths").fetchone()
        assert conn.execute("SELECT records, length FROM totals").fetchone() == counted and counted[0] > 20
        assert conn.execute("PRAGMA user_version").fetchone()[0] == db.SCHEMA_VERSION
    finally:
        conn.close()
        fresh.close()

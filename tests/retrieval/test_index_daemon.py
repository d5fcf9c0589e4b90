"""The search index follows the daemon's processed writes: add, change, rename, delete."""

from __future__ import annotations

from pathlib import Path

from helpers.daemon import DaemonProcess, wait_for
from helpers.retrieval import assert_index_matches_rebuild, keys, make_workspace, session_text, sid_for, write
from kbsync.retrieval import index
from kbsync.store.workspace import Workspace


def test_daemon_keeps_the_search_index_in_step(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_workspace(root, noise=3)
    ws = Workspace(root)
    index.rebuild(ws)
    daemon = DaemonProcess(root)
    try:
        ts = "2025-07-01T09:00:00+08:00"
        sid, prefix = sid_for(ts, "daemon")
        rel, renamed = f"{prefix}-新会话.md", f"{prefix}-改名.md"
        write(root, rel, session_text(sid, ts, ("新",), "open", "first", "苹果 apple"))
        wait_for(lambda: keys(ws, "苹果") == [rel])
        write(root, rel, session_text(sid, ts, ("新",), "open", "second", "香蕉 banana"))
        wait_for(lambda: keys(ws, "香蕉") == [rel] and keys(ws, "苹果") == [])
        (root / rel).rename(root / renamed)
        wait_for(lambda: keys(ws, "banana") == [renamed])
        (root / renamed).unlink()
        wait_for(lambda: keys(ws, "香蕉") == [])
    finally:
        daemon.stop()
    assert "post-write job search index failed" not in daemon.stderr()
    assert_index_matches_rebuild(ws)

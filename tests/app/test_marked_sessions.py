"""app.conflicts.marked_sessions: the sessions marked `status: conflict`, found by one `git grep` when many are new
to the process and by their stat afterwards (a file read again only when it changed), never a stale answer."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from helpers.retrieval import session_text, sid_for, write
from kbsync.app import conflicts, status
from kbsync.app.workspace import open_workspace
from kbsync.store.daemonstatus import DaemonStatus
from kbsync.store.workspace import Workspace

SESSIONS = conflicts.GREP_OVER + 36  # more than a first look reads one by one


def _session(root: Path, i: int, state: str, body: str = "正文") -> str:
    ts = f"2025-06-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00+00:00"
    sid, prefix = sid_for(ts, f"m{i}")
    rel = f"{prefix}-m{i}.md"
    write(root, rel, session_text(sid, ts, ("git",), state, f"会话 {i}", body))
    return rel


@pytest.fixture
def planted(ws_root: Path) -> tuple[Workspace, list[str]]:
    subprocess.run(["git", "init", "-q", str(ws_root)], check=True)
    rels = [_session(ws_root, i, "conflict" if i in (3, 40) else "open",
                     "status: conflict（正文里的这一行不算）" if i == 7 else "正文") for i in range(SESSIONS)]
    return open_workspace(str(ws_root), None), rels


def test_a_first_look_finds_the_marked_sessions_and_later_looks_see_every_change(
        planted: tuple[Workspace, list[str]]) -> None:
    ws, rels = planted
    conflicts._looked.clear()
    assert conflicts.marked_sessions(ws, rels) == sorted([rels[3], rels[40]])  # the body's line is not the field
    _session(ws.root, 3, "open")  # settled by hand
    _session(ws.root, 9, "conflict")  # marked by a repair
    os.utime(ws.path(rels[9]), ns=(1, 1))  # even with a time set back, its size and ctime changed
    assert conflicts.marked_sessions(ws, rels) == sorted([rels[9], rels[40]])
    assert [w.path for w in status.conflict_status(status.scene_of(ws, DaemonStatus()))] == sorted([rels[9], rels[40]])
    assert [i.path for i in conflicts.list_conflicts(ws) if i.kind == "status"] == sorted([rels[9], rels[40]])


def test_outside_a_repository_each_session_is_read(ws_root: Path) -> None:
    rels = [_session(ws_root, i, "conflict" if i == 5 else "open") for i in range(SESSIONS)]
    conflicts._looked.clear()
    ws = open_workspace(str(ws_root), None)
    assert conflicts.marked_sessions(ws, rels) == [rels[5]]


def test_a_first_look_outside_a_repository_takes_what_the_index_holds_of_the_sessions_unchanged_since(
        ws_root: Path) -> None:
    from kbsync.app.retrieval import rebuild_search

    rels = [_session(ws_root, i, "conflict" if i == 5 else "open") for i in range(SESSIONS)]
    ws = open_workspace(str(ws_root), None)
    rebuild_search(ws)
    _session(ws_root, 8, "conflict")  # changed since it was indexed: read
    _session(ws_root, 5, "open")
    conflicts._looked.clear()
    assert conflicts.marked_sessions(ws, rels) == [rels[8]]

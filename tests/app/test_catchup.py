"""app.catchup: a server's reads never wait for the index to catch up with the files; the catch-up runs in one
background thread that steps aside while an answer is made, and is left to a running daemon."""

from __future__ import annotations

import os
import re
import threading
import time
from pathlib import Path

import pytest

from helpers.daemon import wait_for
from kbsync.app import catchup, conflicts, sessions
from kbsync.app.retrieval import build_context
from kbsync.app.status import lock_target, report
from kbsync.app.workspace import open_workspace
from kbsync.retrieval.search import federated
from kbsync.store import fsio, listings
from kbsync.store.workspace import Workspace


@pytest.fixture
def ws(ws_root: Path) -> Workspace:
    w = open_workspace(str(ws_root), None)
    sessions.save_session(w, {"session_id": "made", "ts": "2025-06-01T09:00:00+00:00", "title": "made",
                              "summary": "saved by kbsync", "sections": {"结论": "锁文件没有释放"}})
    assert _found(w, "锁文件")  # the index is built
    return w


def _write_outside(ws: Workspace, word: str) -> str:
    """A session file written by something other than kbsync (no index update), holding `word`."""
    made = next((ws.root / "sessions").rglob("*-made.md"))
    copy = made.parent / made.name.replace("-made.md", f"-{word}.md")
    text = made.read_text(encoding="utf-8").replace("id: ", f"id: {word}", 1).replace("锁文件没有释放", word)
    copy.write_text(text, encoding="utf-8")
    return copy.relative_to(ws.root).as_posix()


def _found(ws: Workspace, word: str) -> set[str]:
    return {h.path for h in federated(ws, word, names=["sessions"]).results}  # reads the index as it is


def _idle() -> bool:
    return not any(t.name == catchup.THREAD for t in threading.enumerate())


def test_a_served_workspace_catches_up_in_the_background_never_during_an_answer(
        ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catchup, "DELAY_S", 0.0)
    catchup.start(ws)
    outside = _write_outside(ws, "zebrafish")
    with catchup.answering():
        pack = build_context(ws, "锁文件", [])  # does not wait for a catch-up: asks for one
        assert "锁文件没有释放" in "".join(text for _, text, _ in pack.parts())  # kbsync's own save: there at once
        time.sleep(0.5)
        assert outside not in _found(ws, "zebrafish")  # the catch-up waits while the answer is being made
    wait_for(lambda: outside in _found(ws, "zebrafish"))
    wait_for(_idle)  # the thread ends when nothing more is wanted
    sessions.save_session(ws, {"session_id": "later", "sections": {"结论": "kingfisher"}})
    assert len(_found(ws, "kingfisher")) == 1  # read-your-own-writes, with no catch-up asked for


def test_the_first_read_of_a_process_that_does_not_serve_catches_up_before_it_reads(ws: Workspace) -> None:
    outside = _write_outside(ws, "narwhal")
    pack = build_context(ws, "narwhal", [])
    assert "narwhal" in "".join(text for _, text, _ in pack.parts())
    assert outside in _found(ws, "narwhal")


def test_the_background_catch_up_is_left_to_a_running_daemon(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    catchup.start(ws)
    outside = _write_outside(ws, "axolotl")
    with fsio.locked(lock_target(ws)):  # held as the daemon holds it, by a live process
        build_context(ws, "axolotl", [])
        wait_for(_idle)
        assert outside not in _found(ws, "axolotl")
    monkeypatch.setattr(catchup, "FRESH_S", 0.0)
    build_context(ws, "axolotl", [])  # no daemon now: this process's own catch-up runs
    wait_for(lambda: outside in _found(ws, "axolotl"))


def _days(ws: Workspace, count: int) -> None:
    """`count` day folders of sessions, one session each (written as a person's editor would, not indexed)."""
    made = next((ws.root / "sessions").rglob("*-made.md")).read_text(encoding="utf-8")
    for n in range(count):
        date = f"2024-{n // 28 + 1:02d}-{n % 28 + 1:02d}"
        text = re.sub("^id: .*$", f"id: {date.replace('-', '')}-0900-{n:07x}", made, count=1, flags=re.MULTILINE)
        (ws.root / "sessions" / date).mkdir(parents=True, exist_ok=True)
        (ws.root / "sessions" / date / f"0900-{n:07x}-day.md").write_text(text.replace("2025-06-01T", f"{date}T"),
                                                                         encoding="utf-8")


def _settled(path: Path) -> None:
    """Last modified a minute ago: no longer changing, as a commit sees it."""
    os.utime(path, (time.time() - 60, time.time() - 60))


def _folders(ws: Workspace) -> set[str]:
    """Every folder of the workspace a status walk enters (its root, .git and .kbsync aside)."""
    return {str(ws.root)} | {str(p) for p in ws.root.rglob("*") if p.is_dir()
                             and p.relative_to(ws.root).parts[0] not in (".git", ".kbsync")}


def test_a_served_workspace_has_status_listings_made_ahead_without_any_call(
        ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(listings, "RACY_NS", 0)  # the folders were just made: keep their listings all the same
    _days(ws, 70)
    catchup.start(ws)
    wait_for(_idle)
    kept = listings._kept[str(ws.root)]
    assert set(kept) == _folders(ws)
    assert all(f is kept[f.path][1] for f in listings.walk(ws.root))  # a report's walk lists nothing again


def test_a_served_workspace_looks_up_its_marked_sessions_ahead_at_its_first_read(ws: Workspace) -> None:
    _days(ws, 70)  # more sessions than one status looks up one by one
    marked = "sessions/2024-01-05/0900-0000004-day.md"
    ws.path(marked).write_text(re.sub("^status: .*$", "status: conflict", ws.read_text(marked), count=1,
                                      flags=re.MULTILINE), encoding="utf-8")
    sessions = set(ws.iter_files("sessions"))
    catchup.start(ws)
    wait_for(_idle)  # the listings are made
    assert not sessions & set(conflicts._looked.get(str(ws.root), {}))  # it waits for a read, which loads the index
    with catchup.answering():
        build_context(ws, "锁文件", [])
    wait_for(_idle)
    assert sessions <= set(conflicts._looked[str(ws.root)])
    assert [w.path for w in report(ws).waiting if w.kind == "conflict-status"] == [marked]


def test_a_status_made_while_the_listings_are_warmed_equals_one_made_after(
        ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(listings, "RACY_NS", 0)
    monkeypatch.setattr(listings, "STEP_FOLDERS", 4)
    _days(ws, 30)
    for path in ws.root.rglob("*"):  # the two reports are a moment apart: no file changing for one of them only
        if path.is_file() and ".git" not in path.relative_to(ws.root).parts:
            _settled(path)
    copy = "LEARNING_BOARD.conflict-20250601T090000Z-m1.md"
    with catchup.answering():  # the warm-up steps aside at its first step, its first four folders listed
        catchup.start(ws)
        wait_for(lambda: len(listings._kept.get(str(ws.root), {})) >= 4)
        assert str(ws.root) in listings._kept[str(ws.root)] and not _idle()  # the root was listed; more to go
        assert len(listings._kept[str(ws.root)]) < len(_folders(ws))
        time.sleep(0.05)  # past the file system clock's tick, so that the root's ctime moves
        ws.path(copy).write_text("x\n", encoding="utf-8")  # a folder the warm-up listed changes meanwhile
        _settled(ws.path(copy))
        during = report(ws).as_dict()
    wait_for(_idle)
    assert copy in {w["path"] for w in during["waiting"]}
    assert report(ws).as_dict() == during

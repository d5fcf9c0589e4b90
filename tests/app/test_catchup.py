"""app.catchup: a server's reads never wait for the index to catch up with the files; the catch-up runs in one
background thread that steps aside while an answer is made, and is left to a running daemon."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from helpers.daemon import wait_for
from kbsync.app import catchup, sessions
from kbsync.app.retrieval import build_context, search
from kbsync.app.status import lock_target
from kbsync.app.workspace import open_workspace
from kbsync.store import fsio
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
    return {h.path for h in search(ws, word, sources=["sessions"]).results}  # reads the index as it is


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

"""store.listings: the walk `kbsync status` makes keeps each folder's listing while the folder is unchanged, and
sees every change a folder gets: files made, removed and renamed, folders made, a FIFO, a symlink."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from kbsync.app.status import report
from kbsync.app.workspace import open_workspace
from kbsync.store import fsio, listings
from kbsync.store.unreadable import unreadable_files
from kbsync.store.workspace import Workspace

SUFFIX = (".md", fsio.TEMP_SUFFIX)
TRICKY = ["a/b.md", "a-b/x.md", "a.md", "a0.md", "a/z.md", "合同/评审.md", ".git/x.md", ".kbsync/y.md",
          "deep/.git/z.md", "x.txt"]


def _make(root: Path, rels: list[str]) -> None:
    for rel in rels:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n", encoding="utf-8")


def _same_as_a_fresh_walk(ws: Workspace) -> None:
    walked = listings.walk(ws.root)
    assert listings.files(walked, SUFFIX) == list(ws.iter_files(suffix=SUFFIX))
    fresh = listings.walk(ws.root / ".." / ws.root.name)  # another key: nothing kept
    assert unreadable_files(walked) == unreadable_files(fresh)


def _tick() -> None:
    time.sleep(0.05)  # past the file system clock's tick, so that the next change moves a folder's ctime


def test_a_kept_listing_follows_every_change_of_its_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(listings, "RACY_NS", 0)  # every listing kept at once (changes come a tick apart)
    root = tmp_path / "ws"
    _make(root, TRICKY)
    ws = Workspace(root)
    changes = [
        lambda: _make(root, ["a/new.md", "合同/新.md"]),
        lambda: (root / "a" / "z.md").unlink(),
        lambda: (root / "a" / "b.md").rename(root / "a-b" / "b.md"),
        lambda: _make(root, ["a/sub/deeper/c.md"]),
        lambda: os.mkfifo(root / "a" / "pipe.md"),
        lambda: os.symlink(root / "nowhere", root / "a" / "dangling.md"),
        lambda: os.symlink(root / "a", root / "a-b" / "folder.md"),  # a link to a folder: not one of the files
        lambda: (root / "a" / "w.md.kbsync-tmp").write_text("half", encoding="utf-8"),
        lambda: (root / "a" / "sub").rename(root / "moved"),
    ]
    _same_as_a_fresh_walk(ws)
    for change in changes:
        _tick()
        change()
        _same_as_a_fresh_walk(ws)


def test_status_in_a_long_lived_process_sees_what_came_since_its_last_report(ws_root: Path) -> None:
    ws = open_workspace(str(ws_root), None)
    day = ws_root / "sessions" / "2025-06-01"
    day.mkdir(parents=True)
    (day / "0900-abcdef1-a.md").write_text("x\n", encoding="utf-8")
    made = {"sessions/2025-06-01/0900-abcdef1-a.conflict-20250601T090000Z-m1.md", "sessions/2025-06-01/pipe.md"}
    assert not made & {w.path for w in report(ws).waiting}
    _tick()
    (day / "0900-abcdef1-a.conflict-20250601T090000Z-m1.md").write_text("x\n", encoding="utf-8")
    os.mkfifo(day / "pipe.md")
    assert made <= {w.path for w in report(ws).waiting}

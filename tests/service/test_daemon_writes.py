"""The daemon's own writes count as its own: shutdown commits what it just repaired, the catch-up scan is
quiet about files nobody touched, and .git/ and .kbsync/ are not watched at all."""

from __future__ import annotations

import os
from pathlib import Path

from helpers.daemon import DaemonProcess, dirty, git, head_files, session_relpath, session_text, wait_for, write
from kbsync.app.workspace import init_workspace


def workspace(tmp_path: Path, quiet_ms: int = 300) -> Path:
    root = tmp_path / "ws"
    init_workspace(root)
    (root / ".kbsync" / "config.toml").write_text(f"[daemon]\nquiet_ms = {quiet_ms}\n")
    return root


def test_shutdown_commits_the_file_it_just_repaired(tmp_path: Path) -> None:
    root = workspace(tmp_path, quiet_ms=1500)  # a long quiet time: the stop comes well inside it
    d = DaemonProcess(root)
    try:
        rel = session_relpath(1)
        write(root, rel, dirty(session_text(rel)), age_s=5)
        wait_for(lambda: f"{rel}: repaired" in d.stderr())
    finally:
        assert d.stop() == 0
    assert rel in head_files(root), d.stderr()
    assert "status： " not in git(root, "show", f"HEAD:{rel}")
    assert git(root, "status", "--porcelain") == ""
    assert f"{rel}: changing" not in git(root, "log", "-1", "--format=%B")


def test_catch_up_is_quiet_about_files_nobody_touched(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    for n in range(3):
        rel = session_relpath(n)
        write(root, rel, session_text(rel, status="closed"), age_s=60)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "closed sessions, committed")
    os.remove(root / ".kbsync" / "config.toml")  # a first start: no scan mark, every file is looked at
    d = DaemonProcess(root)
    try:
        wait_for(lambda: "catch-up scan" in d.stderr() and session_relpath(2) + ": checked" in d.stderr())
        touched = session_relpath(7)
        write(root, touched, session_text(touched, status="closed"))
        wait_for(lambda: f"{touched}: closed session written" in d.stderr())
    finally:
        assert d.stop() == 0
    log = d.stderr()
    assert log.count("closed session written") == 1, log
    assert "RuntimeWarning" not in log and "Traceback" not in log


def _watched_inodes(pid: int) -> set[int]:
    found: set[int] = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if "inotify" not in os.readlink(f"/proc/{pid}/fd/{fd}"):
                continue
            lines = Path(f"/proc/{pid}/fdinfo/{fd}").read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            if line.startswith("inotify wd:"):
                fields = dict(part.split(":", 1) for part in line.split()[1:] if ":" in part)
                found.add(int(fields["ino"], 16))
    return found


def test_git_and_kbsync_state_are_not_watched(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    d = DaemonProcess(root)
    try:
        rel = session_relpath(5)
        write(root, rel, dirty(session_text(rel, status="closed")))  # a repair (backup) and a commit (objects)
        wait_for(lambda: "committed" in d.stderr())
        new_folder = root / "projects" / "a"
        new_folder.mkdir(parents=True)
        wait_for(lambda: os.stat(new_folder).st_ino in _watched_inodes(d.proc.pid))  # a new top-level folder is
        write(root, "projects/a/note.md", "# 笔记\n")  # watched, and what it holds is seen
        wait_for(lambda: "projects/a/note.md: checked" in d.stderr())
        watched = _watched_inodes(d.proc.pid)
        state = [p for base in (root / ".git", root / ".kbsync") for p in [base, *base.rglob("*")] if p.is_dir()]
        assert state and not {os.stat(p).st_ino for p in state} & watched
        assert os.stat(root / "sessions" / "2025-06-11").st_ino in watched
        assert os.stat(root).st_ino in watched
    finally:
        assert d.stop() == 0
    assert "RuntimeWarning" not in d.stderr()

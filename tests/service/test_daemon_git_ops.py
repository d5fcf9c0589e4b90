"""The daemon across a stopped rebase, a left merge conflict and a detached HEAD: it commits nothing while
git is in the middle, says so once, and afterwards every session saved meanwhile is present and committed
on the branch. The real daemon process, real git, the real command line."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Iterator

import pytest

from helpers.cli import Cli
from helpers.daemon import DaemonProcess, git, head_files, new_repo, subjects, wait_for, write
from helpers.gitops import STATES


@pytest.fixture()
def root(tmp_path: Path) -> Iterator[Path]:
    ws = new_repo(tmp_path / "ws")
    (ws / ".kbsync").mkdir()
    (ws / ".kbsync" / "config.toml").write_text('[daemon]\nquiet_ms = 100\n')
    yield ws


def save(cli: Cli, root: Path, n: int) -> str:
    payload = {"session_id": f"saved-during-{n}", "title": f"会话{n}", "status": "closed",
               "sections": {"结论": f"第 {n} 个"}}
    done = cli("session", "save", ws=root, stdin=json.dumps(payload, ensure_ascii=False))
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.slow
@pytest.mark.parametrize("state", ["rebase", "merge", "detached"])
def test_the_daemon_waits_for_git_and_then_commits_every_saved_session(root: Path, cli: Cli, state: str) -> None:
    enter, says, leave = STATES[state]
    enter(root)
    d = DaemonProcess(root)
    try:
        before, history = git(root, "rev-parse", "HEAD", "main"), subjects(root)
        saved = [save(cli, root, n) for n in range(3)]
        wait_for(lambda: f"waiting: {says}" in d.stderr(), timeout=15)
        shown = cli("status", ws=root)
        assert shown.returncode == 1 and shown.stdout.startswith(f"waiting: {says}")
        saved.append(save(cli, root, 3))
        time.sleep(2.0)  # more than enough for a closed session to be committed, were git not busy
        assert git(root, "rev-parse", "HEAD", "main") == before and subjects(root) == history
        assert all((root / rel).is_file() for rel in saved)
        if state == "merge":  # the person resolves the conflict and concludes the merge
            write(root, "notes.md", "both sides\n", age_s=5)
            git(root, "commit", "-qam", "merged by hand")
        else:
            git(root, *leave)
        # committed, and git's index brought in line (a moment after HEAD moves)
        wait_for(lambda: set(saved) <= head_files(root) and not git(root, "status", "--porcelain", "--", *saved),
                 timeout=20)
        assert git(root, "symbolic-ref", "--short", "HEAD").strip() == "main"
        assert d.stderr().count(f"waiting: {says}") == 1 and "resuming" in d.stderr()
        assert "<<<<<<<" not in git(root, "show", "HEAD:notes.md")
    finally:
        assert d.stop() == 0

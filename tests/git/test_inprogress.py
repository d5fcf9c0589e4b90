"""While git is in the middle of an operation, `kbsync commit`, `kbsync sync` and `kbsync status` say so and
touch nothing; once a person ends it they work again. Real repositories, the real command line."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from helpers.cli import Cli
from helpers.daemon import git, head_files, new_repo, session_relpath, session_text, write
from helpers.gitops import STATES
from kbsync.git.inprogress import in_progress


@pytest.mark.parametrize("state", sorted(STATES))
def test_every_operation_is_recognised_and_its_end_too(tmp_path: Path, state: str) -> None:
    root = new_repo(tmp_path / "ws")
    assert in_progress(root) is None
    enter, says, leave = STATES[state]
    enter(root)
    assert (in_progress(root) or "").startswith(says)
    git(root, *leave)
    assert in_progress(root) is None


def test_git_is_asked_about_unmerged_entries_again_only_once_its_index_changed(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    root = new_repo(tmp_path / "ws")
    git(root, "reset", "-q")  # git writes its index
    assert in_progress(root) is None
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs"))  # git cannot be started now
    assert in_progress(root) is None, "the index is as it was when git found no unmerged entry"
    monkeypatch.undo()
    STATES["unmerged"][0](root)  # git writes a new index holding unmerged entries
    assert (in_progress(root) or "").startswith("unmerged paths")
    git(root, "reset", "-q", "--merge")
    assert in_progress(root) is None


def test_a_worktree_is_judged_by_its_own_git_folder(tmp_path: Path) -> None:
    root = new_repo(tmp_path / "ws")
    STATES["detached"][0](root)
    git(root, "checkout", "-q", "main")
    git(root, "worktree", "add", "-q", "--detach", str(tmp_path / "wt"))
    assert in_progress(tmp_path / "wt") == "detached HEAD (check out a branch)" and in_progress(root) is None


@pytest.mark.parametrize("state", ["rebase", "merge", "detached"])
def test_commit_sync_and_status_wait_and_write_nothing(tmp_path: Path, cli: Cli, state: str) -> None:
    root = new_repo(tmp_path / "ws")
    enter, says, leave = STATES[state]
    enter(root)
    before = git(root, "rev-parse", "HEAD", "main")
    rel = session_relpath(5)
    write(root, rel, session_text(rel, status="closed"), age_s=5)
    done = cli("commit", "--json", ws=root)
    assert done.returncode == 1 and json.loads(done.stdout)["waiting"].startswith(says)
    text = cli("commit", ws=root)
    assert text.returncode == 1 and text.stdout.startswith(f"waiting: {says}")
    synced = cli("sync", ws=root)
    assert synced.returncode == 1 and synced.stdout.startswith(f"waiting: {says}")
    shown = cli("status", ws=root)
    assert shown.returncode == 1 and shown.stdout.startswith(f"waiting: {says}")
    assert git(root, "rev-parse", "HEAD", "main") == before
    git(root, *leave)
    time.sleep(0.4)
    assert cli("commit", ws=root).returncode == 0
    assert rel in head_files(root) and git(root, "symbolic-ref", "--short", "HEAD").strip() == "main"
    assert cli("status", ws=root).returncode == 0

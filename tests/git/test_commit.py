"""kbsync.committer and `kbsync commit` on real repositories."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from helpers.cli import Cli
from helpers.daemon import dirty, git, new_repo, session_relpath, session_text, write
from helpers.hook import provider_secrets
from kbsync.config import Config
from kbsync.git import commit, repo
from kbsync.store import fsio
from kbsync.store.workspace import Workspace

OLD = 5.0  # seconds: files written this long ago are quiet


@pytest.fixture()
def ws(tmp_path: Path) -> Workspace:
    return Workspace(new_repo(tmp_path / "ws"), Config())


def test_commits_valid_quiet_files_with_a_breakdown(ws: Workspace) -> None:
    for n in range(3):
        rel = session_relpath(n)
        write(ws.root, rel, session_text(rel), age_s=OLD)
    write(ws.root, "logs/errors.md", "2025-06-11T00:00:00Z x\n", age_s=OLD)
    result = commit.commit_pending(ws, reason="hourly")
    assert result.sha and not result.skipped
    assert git(ws.root, "log", "-1", "--format=%s") == "hourly: 5 files (3 sessions, logs, 1 other file)\n"
    assert git(ws.root, "log", "-1", "--format=%an") == "kbsync\n"
    assert repo.changed_paths(ws.root) == []


def test_leaves_out_locked_invalid_and_changing_files_and_says_why(ws: Workspace) -> None:
    ok, bad, busy, fresh = (session_relpath(n) for n in range(4))
    write(ws.root, ok, session_text(ok), age_s=OLD)
    write(ws.root, bad, dirty(session_text(bad)), age_s=OLD)
    write(ws.root, busy, session_text(busy), age_s=OLD)
    write(ws.root, fresh, session_text(fresh))
    assert fsio.try_lock(ws.path(busy), 60)
    result = commit.commit_pending(ws, reason="hourly")
    assert result.committed == [".gitignore", ok]
    assert result.skipped[busy] == "locked"
    assert result.skipped[fresh] == "changing"
    assert result.skipped[bad].startswith("invalid: ")
    body = git(ws.root, "log", "-1", "--format=%B")
    assert "Left out for a later commit (3):" in body and f"- {busy}: locked" in body
    assert sorted(repo.changed_paths(ws.root)) == sorted([bad, busy, fresh])
    fsio.unlock(ws.path(busy))
    time.sleep(ws.config.daemon.quiet_ms / 1000)
    later = commit.commit_pending(ws, reason="hourly")
    assert sorted(later.committed) == sorted([busy, fresh])


def test_session_closing_names_the_session(ws: Workspace) -> None:
    rel = session_relpath(0x1b2c3d)
    write(ws.root, rel, session_text(rel), age_s=OLD)
    commit.commit_pending(ws, reason="hourly")
    write(ws.root, rel, session_text(rel, status="closed"), age_s=OLD)
    result = commit.commit_pending(ws, reason="session")
    sid = rel.split("/")[2][:12]
    assert result.message.splitlines()[0] == f"session 20250611-{sid[:4]}-{sid[5:]} closed: 合同风险梳理"


def test_deletions_are_committed(ws: Workspace) -> None:
    rel = session_relpath(1)
    write(ws.root, rel, session_text(rel), age_s=OLD)
    commit.commit_pending(ws, reason="hourly")
    ws.path(rel).unlink()
    result = commit.commit_pending(ws, reason="hourly")
    assert result.message.startswith("hourly: 1 file (1 session, 1 deleted)")
    assert rel not in git(ws.root, "ls-tree", "-r", "--name-only", "HEAD")


def test_a_removal_under_a_held_lock_waits_for_its_writer(ws: Workspace) -> None:
    """A writer removing a file as one step of several (settling a conflict) holds its lock: a timed commit
    leaves the removal out, and the writer's own commit, naming the lock as its own, takes it."""
    rel = session_relpath(2)
    write(ws.root, rel, session_text(rel), age_s=OLD)
    commit.commit_pending(ws, reason="hourly")
    with fsio.locked(ws.path(rel)):
        ws.path(rel).unlink()
        timed = commit.commit_pending(ws, reason="hourly")
        assert timed.skipped == {rel: "locked"} and rel in git(ws.root, "ls-tree", "-r", "--name-only", "HEAD")
        assert commit.commit_paths(ws, [rel], "settled\n").skipped == {rel: "locked"}
        own = commit.commit_paths(ws, [rel], "settled\n", held=frozenset({rel}))
    assert own.sha and rel not in git(ws.root, "ls-tree", "-r", "--name-only", "HEAD")


def test_runtime_files_are_never_committed(ws: Workspace) -> None:
    (ws.root / ".gitignore").unlink()
    write(ws.root, ".kbsync/status.json", "{}", age_s=OLD)
    write(ws.root, "memory/facts.md.lock", "{}", age_s=OLD)
    write(ws.root, "memory/.facts.md.abc.tmp", "x", age_s=OLD)
    assert commit.commit_pending(ws, reason="hourly").sha is None


def test_nothing_to_commit(ws: Workspace) -> None:
    assert commit.commit_pending(ws, reason="manual").sha
    result = commit.commit_pending(ws, reason="manual")
    assert result.sha is None and str(result) == "nothing to commit"


def test_stale_index_lock_blocks_and_is_kept(ws: Workspace) -> None:
    rel = session_relpath(1)
    write(ws.root, rel, session_text(rel), age_s=OLD)
    lock = repo.index_lock(ws.root)
    lock.write_text("")
    os.utime(lock, (time.time() - 600, time.time() - 600))
    result = commit.commit_pending(ws, reason="hourly")
    assert result.sha is None and result.blocked and "stale" in result.blocked and lock.exists()


def test_commit_command(ws: Workspace, cli: Cli) -> None:
    rel, bad = session_relpath(1), session_relpath(2)
    write(ws.root, rel, session_text(rel), age_s=OLD)
    write(ws.root, bad, dirty(session_text(bad)), age_s=OLD)
    proc = cli("commit", "-m", "by hand", ws=ws.root)
    assert proc.returncode == 0, proc.stderr
    assert f"left out of the commit: {bad} (invalid" in proc.stderr
    assert proc.stderr.count("left out") == 1  # said once, not by the log and the command both
    assert git(ws.root, "log", "-1", "--format=%s") == "by hand\n"
    again = cli("commit", "--json", ws=ws.root)
    assert again.returncode == 0 and json.loads(again.stdout)["sha"] is None


def test_a_file_holding_a_secret_stays_out(ws: Workspace) -> None:
    rel, ok = session_relpath(1), session_relpath(2)
    write(ws.root, rel, session_text(rel, body=provider_secrets()["github-pat"]), age_s=OLD)
    write(ws.root, ok, session_text(ok), age_s=OLD)
    result = commit.commit_pending(ws, reason="hourly")
    assert ok in result.committed and rel not in result.committed
    assert result.skipped[rel].startswith("secret: ") and "github-pat" in result.skipped[rel]


def test_waits_for_a_busy_index_lock(ws: Workspace) -> None:
    rel = session_relpath(1)
    write(ws.root, rel, session_text(rel), age_s=OLD)
    lock = repo.index_lock(ws.root)
    lock.write_text("")
    threading.Timer(0.5, lock.unlink).start()
    result = commit.commit_pending(ws, reason="hourly")
    assert result.sha and rel in result.committed


def test_a_file_name_with_a_line_break_is_left_out_with_why(ws: Workspace) -> None:
    write(ws.root, "memory/odd\nname.md", "- odd\n", age_s=OLD)
    write(ws.root, "memory/facts.md", "- plain\n", age_s=OLD)
    result = commit.commit_pending(ws, reason="hourly")
    assert "memory/facts.md" in result.committed and "memory/odd\nname.md" not in result.committed
    assert result.skipped["memory/odd\nname.md"].startswith("invalid: its name holds a line break")

"""`kbsync status` tells the truth with or without a running daemon: git's HEAD, and everything that waits."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from helpers.cli import Cli
from helpers.daemon import DaemonProcess, dirty, git, session_relpath, session_text, wait_for, write
from kbsync.store import fsio


def report(cli: Cli, root: Path) -> tuple[int, dict[str, Any]]:
    proc = cli("status", "--json", ws=root)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def waiting(rep: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {w["path"]: (w["kind"], w["settle_by"]) for w in rep["waiting"]}


def committed(root: Path) -> Path:
    assert cli_init(root)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "by hand")
    return root


def cli_init(root: Path) -> bool:
    from kbsync.app.workspace import init_workspace

    init_workspace(root)
    return True


def test_last_commit_is_gits_head_whoever_made_it(tmp_path: Path, cli: Cli) -> None:
    root = committed(tmp_path / "ws")
    code, rep = report(cli, root)
    assert code == 0 and rep["waiting"] == [] and rep["uncommitted"] == 0
    assert rep["last_commit"]["sha"] == git(root, "rev-parse", "HEAD").strip()
    assert rep["last_commit"]["message"] == "by hand" and rep["last_commit"]["author"] == "kbsync test"
    text = cli("status", ws=root).stdout
    assert f"last commit: {rep['last_commit']['sha'][:7]} by hand at " in text and "waiting:     nothing" in text


def test_everything_that_waits_is_listed_and_exits_1(tmp_path: Path, cli: Cli) -> None:
    root = committed(tmp_path / "ws")
    bad = session_relpath(1)
    rebuilt = session_relpath(2)
    write(root, rebuilt, "只有正文，没有 frontmatter\n", age_s=10)
    assert cli("repair", rebuilt, ws=root).returncode == 0  # rebuilt with status: conflict
    git(root, "add", "-A")
    git(root, "commit", "-qm", "rebuilt")  # even once committed, it waits for a person
    write(root, bad, dirty(session_text(bad)), age_s=10)
    copy = "sessions/2025-06-11/0003-0000003-x.conflict-20250611T063000Z.md"
    write(root, copy, session_text(session_relpath(3), status="conflict"), age_s=10)
    temp = "memory/.facts.md.0a1b2c3d4e5f.tmp"
    write(root, temp, "- half a save\n", age_s=120)
    write(root, "memory/.facts.md.9f8e7d6c5b4a.tmp", "- a write in progress\n")
    code, rep = report(cli, root)
    assert code == 1
    found = waiting(rep)
    assert found[bad] == ("left-out", "person") and rep["skipped"][bad].startswith("invalid: ")
    assert found[rebuilt] == ("conflict-status", "person")
    assert found[copy] == ("conflict-copy", "person") and rep["conflicts"] == [copy]
    assert found[temp] == ("temp-file", "person") and rep["leftovers"] == [temp]
    assert "memory/.facts.md.9f8e7d6c5b4a.tmp" not in found  # a write in progress is no leftover
    assert (root / temp).read_text() == "- half a save\n"  # listed, never deleted
    text = cli("status", ws=root).stdout
    assert f"  {bad}: left out of commits: invalid: " in text and f"  {rebuilt}: status: conflict" in text


def test_a_locked_file_waits_for_time_and_still_exits_1(tmp_path: Path, cli: Cli) -> None:
    root = committed(tmp_path / "ws")
    rel = session_relpath(4)
    path = write(root, rel, session_text(rel), age_s=10)
    assert fsio.try_lock(path, 60)
    code, rep = report(cli, root)
    assert code == 1 and waiting(rep)[rel] == ("left-out", "time") and rep["skipped"][rel] == "locked"
    fsio.unlock(path)
    code, rep = report(cli, root)
    assert code == 0 and rep["uncommitted"] == 1  # committable now: nothing waits


def test_the_same_truth_while_the_daemon_runs(tmp_path: Path, cli: Cli) -> None:
    root = committed(tmp_path / "ws")
    d = DaemonProcess(root)
    try:
        rel = session_relpath(5)
        write(root, rel, session_text(rel).replace("status: open", "status: 未知"))  # invalid, repair cannot fix
        wait_for(lambda: f"{rel}: invalid" in d.stderr())
        git(root, "commit", "-q", "--allow-empty", "-m", "a commit the daemon did not make")
        code, rep = report(cli, root)
        assert rep["running"] and rep["pid"] == d.proc.pid
        assert code == 1 and waiting(rep)[rel] == ("left-out", "person")
        assert rep["last_commit"]["message"] == "a commit the daemon did not make"
    finally:
        assert d.stop() == 0
    code, after = report(cli, root)
    assert not after["running"] and code == 1 and waiting(after)[rel] == ("left-out", "person")


def test_what_waits_is_a_list_other_checks_can_extend(tmp_path: Path) -> None:
    from kbsync.app import status
    from kbsync.app.workspace import init_workspace
    from kbsync.store.workspace import Workspace

    root = tmp_path / "ws"
    init_workspace(root)

    def rebase_in_progress(scene: status.Scene) -> list[status.Waiting]:
        return [status.Waiting(".git", "git rebase in progress", "person", "rebase")]

    checks = status.CHECKS
    status.CHECKS = (*checks, rebase_in_progress)
    try:
        rep = status.report(Workspace(root), now=time.time())
    finally:
        status.CHECKS = checks
    assert rep.exit_code == 1 and rep.as_dict()["waiting"][-1] == {
        "path": ".git", "reason": "git rebase in progress", "settle_by": "person", "kind": "rebase"}
    assert "  .git: git rebase in progress" in status.render(rep)
    assert os.path.isdir(root / ".git")

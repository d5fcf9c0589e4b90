"""Messages said once and whole, and the exit codes the command line documents."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from helpers.cli import Cli
from helpers.daemon import dirty, git, head_files, session_relpath, session_text, write


def init(cli: Cli, root: Path) -> Path:
    assert cli("init", ws=root).returncode == 0
    return root


def test_repair_says_each_fix_once(tmp_path: Path, cli: Cli) -> None:
    root = init(cli, tmp_path / "ws")
    rel = session_relpath(1)
    write(root, rel, dirty(session_text(rel)))
    proc = cli("repair", ws=root)
    assert proc.returncode == 0
    both = proc.stdout + proc.stderr
    assert both.count("full-width colon after 'status'") == 1, both
    assert f"{rel}: repaired: full-width colon" in proc.stdout


def test_commit_says_each_file_left_out_once(tmp_path: Path, cli: Cli) -> None:
    root = init(cli, tmp_path / "ws")
    rel = session_relpath(2)
    write(root, rel, session_text(rel).replace("status: open", "status: 未知"), age_s=10)
    proc = cli("commit", ws=root)
    assert proc.returncode == 0
    both = proc.stdout + proc.stderr
    assert both.count("left out") == 1 and f"left out of the commit: {rel} (invalid: " in proc.stderr, both
    sha = git(root, "rev-parse", "HEAD").strip()
    assert both.count(sha[:7]) == 1  # the commit is said once too


def test_a_failing_fetch_shows_gits_whole_message(tmp_path: Path, cli: Cli) -> None:
    root = init(cli, tmp_path / "ws")
    git(root, "remote", "add", "origin", str(tmp_path / "no-such-remote"))
    proc = cli("sync", ws=root)
    assert proc.returncode == 3
    assert "does not appear to be a git repository" in proc.stderr  # git's first line
    assert "and the repository exists." in proc.stderr  # and its last
    assert "Traceback" not in proc.stderr


def test_sync_without_a_remote_refuses_before_committing(tmp_path: Path, cli: Cli) -> None:
    root = init(cli, tmp_path / "ws")
    rel = session_relpath(3)
    write(root, rel, session_text(rel), age_s=10)
    proc = cli("sync", ws=root)
    assert proc.returncode == 2
    assert "no git remote 'origin'" in proc.stderr and "nothing was committed" in proc.stderr
    assert git(root, "rev-list", "--all") == "" and rel not in head_files(root)  # not a single commit


def test_impossible_dates_are_usage_errors(tmp_path: Path, cli: Cli) -> None:
    root = init(cli, tmp_path / "ws")
    for word in ("since:2026-13", "until:2026-02-31", "since:2026-00"):
        for command in (("search", "合同", word), ("context", "-q", f"合同 {word}")):
            proc = cli(*command, ws=root)
            assert proc.returncode == 2, (command, proc.stderr)
            assert "is not a date" in proc.stderr and "Traceback" not in proc.stderr
    assert cli("search", "合同", "since:2024-02-29", ws=root).returncode == 1  # a real date: no hits, exit 1


def test_commit_right_after_a_save_waits_out_the_quiet_time(tmp_path: Path, cli: Cli) -> None:
    root = init(cli, tmp_path / "ws")
    assert cli("commit", ws=root).returncode == 0
    saved = cli("session", "save", ws=root, stdin=json.dumps({"session_id": "s1", "title": "t"}))
    assert saved.returncode == 0
    proc = cli("commit", "--json", ws=root)
    assert proc.returncode == 0
    result = json.loads(proc.stdout)
    assert result["skipped"] == {} and saved.stdout.strip() in result["committed"], result
    assert "index.md" in result["committed"]
    assert subprocess.run(["git", "-C", str(root), "status", "--porcelain"], capture_output=True,
                          text=True).stdout == ""

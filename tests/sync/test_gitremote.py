"""`kbsync sync` in git mode: workspaces on one bare remote converge losslessly, never forced."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from helpers.cli import Cli, kbsync
from helpers.daemon import session_relpath, session_text
from helpers.sync import all_text, append, git, is_ancestor, make_bare, open_ws, tree_files, upsert_board, workspace
from kbsync.sync.state import load as load_state
from kbsync.sync.syncer import sync
from kbsync.sync.transports.base import RemoteHead
from kbsync.sync.transports.gitremote import GitTransport


def write_session(root: Path, n: int, body: str) -> str:
    rel = session_relpath(n)
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(session_text(rel, body=body), encoding="utf-8")
    return rel


def test_fresh_workspace_takes_the_remote_and_skeleton_yields(tmp_path: Path) -> None:
    bare = make_bare(tmp_path / "remote.git")
    a = workspace(tmp_path, "a", bare)
    (a / "memory/facts.md").write_text("# 长期事实\n- from a\n", encoding="utf-8")
    write_session(a, 1, "a's session")
    assert sync(open_ws(a)).exit_code == 0
    b = workspace(tmp_path, "b", bare)
    result = sync(open_ws(b))
    assert result.conflicts == [] and "memory/facts.md" in result.pulled
    assert (b / "memory/facts.md").read_text(encoding="utf-8") == "# 长期事实\n- from a\n"
    assert git(b, "rev-parse", "HEAD^{tree}") == git(bare, "rev-parse", "main^{tree}")
    assert git(b, "status", "--porcelain") == ""
    assert load_state(open_ws(b))["remote"] == git(bare, "rev-parse", "main")


def test_same_file_both_sides_keeps_remote_and_saves_a_conflict_copy(tmp_path: Path, cli: Cli) -> None:
    bare = make_bare(tmp_path / "remote.git")
    a, b = workspace(tmp_path, "a", bare), workspace(tmp_path, "b", bare)
    sync(open_ws(a)), sync(open_ws(b))
    append(a, "artifacts/notes.md", "- a says")
    append(b, "artifacts/notes.md", "- b says")
    append(a, "logs/tool-calls.md", "2025-06-11T00:00:00Z | s | a-tool | ok")
    append(b, "logs/tool-calls.md", "2025-06-11T00:00:01Z | s | b-tool | ok")
    assert sync(open_ws(a)).exit_code == 0
    done = cli("-w", str(b), "sync")
    assert done.returncode == 1, done.stderr
    assert "conflict" in done.stderr
    files = tree_files(bare, "main")
    assert b"- a says" in files["artifacts/notes.md"]
    copies = [p for p in files if p.startswith("artifacts/notes.conflict-")]
    assert len(copies) == 1 and b"- b says" in files[copies[0]]
    assert b"a-tool" in files["logs/tool-calls.md"] and b"b-tool" in files["logs/tool-calls.md"]
    assert b"conflict: artifacts/notes.md" in files["logs/errors.md"] and b"added on both sides" in files["logs/errors.md"]


def test_a_sync_stopped_while_saving_a_conflict_copy_has_not_overwritten_the_local_version(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The copy is saved before the remote's version takes the path, so a crash (here: a full disk)
    in between leaves this machine's version on disk, not only in git's history."""
    from kbsync.store import conflicts

    bare = make_bare(tmp_path / "remote.git")
    a, b = workspace(tmp_path, "a", bare), workspace(tmp_path, "b", bare)
    sync(open_ws(a)), sync(open_ws(b))
    append(a, "artifacts/notes.md", "- a says")
    append(b, "artifacts/notes.md", "- b says")
    assert sync(open_ws(a)).exit_code == 0

    def disk_full(*_args: object, **_kw: object) -> str:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(conflicts, "save_conflict_copy", disk_full)
    with pytest.raises(OSError):
        sync(open_ws(b))
    assert "- b says" in (b / "artifacts/notes.md").read_text(encoding="utf-8")
    monkeypatch.undo()
    assert sync(open_ws(b)).exit_code == 1
    here = {p.name: p.read_text(encoding="utf-8") for p in (b / "artifacts").glob("notes*.md")}
    assert "- a says" in here["notes.md"] and any("- b says" in text for name, text in here.items() if name != "notes.md")


def test_the_pre_push_hook_does_not_scan_again_what_sync_scanned(tmp_path: Path, cli: Cli) -> None:
    """With kbsync's hooks installed, `git push` runs `kbsync hook pre-push`; the push `sync` makes skips
    that second scan of the objects it has just scanned. Here kbsync's hook cannot run at all
    (KBSYNC_PYTHON=/bin/false): a plain push fails, the sync's push goes through."""
    bare = make_bare(tmp_path / "remote.git")
    a = workspace(tmp_path, "a", bare)
    assert cli("-w", str(a), "hook", "install").returncode == 0
    assert cli("-w", str(a), "sync").returncode == 0
    append(a, "memory/facts.md", "- pushed by sync")
    broken = {**os.environ, "KBSYNC_PYTHON": "/bin/false"}
    done = subprocess.run([sys.executable, "-m", "kbsync", "-w", str(a), "sync"], env=broken, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    assert b"- pushed by sync" in tree_files(bare, "main")["memory/facts.md"]
    git(a, "commit", "-q", "--allow-empty", "--no-verify", "-m", "by hand")
    plain = subprocess.run(["git", "-C", str(a), "push", "-q", "origin", "HEAD:main"], env=broken, capture_output=True)
    assert plain.returncode != 0  # the hook ran, and failed as set up


def test_locked_file_in_the_way_postpones_the_sync(tmp_path: Path) -> None:
    bare = make_bare(tmp_path / "remote.git")
    a, b = workspace(tmp_path, "a", bare), workspace(tmp_path, "b", bare)
    sync(open_ws(a)), sync(open_ws(b))
    append(a, "memory/facts.md", "- a says")
    sync(open_ws(a))
    (b / "memory/facts.md").write_text("not a bullet line makes it only a warning\n", encoding="utf-8")
    (b / "memory/facts.md.lock").write_text('{"pid": 1, "host": "elsewhere", "expire": 9999999999}', encoding="utf-8")
    with pytest.raises(Exception, match="lock"):
        sync(open_ws(b))
    assert (b / "memory/facts.md").read_text(encoding="utf-8") == "not a bullet line makes it only a warning\n"


def test_rejected_push_is_integrated_again_never_forced(tmp_path: Path) -> None:
    bare = make_bare(tmp_path / "remote.git")
    a, b = workspace(tmp_path, "a", bare), workspace(tmp_path, "b", bare)
    sync(open_ws(a)), sync(open_ws(b))
    write_session(b, 2, "b's work")
    write_session(a, 3, "a's work")

    class Racing(GitTransport):
        def push(self, local_head: str, remote: RemoteHead | None) -> RemoteHead | None:
            if not sleeps:
                sync(open_ws(a))  # another machine pushes between our fetch and our push
            return super().push(local_head, remote)

    sleeps: list[float] = []
    result = sync(open_ws(b), Racing(b, "origin", "main", timeout_s=60), sleep=sleeps.append)
    assert result.pushed and result.conflicts == [] and result.rounds == 2 and len(sleeps) == 1
    files = tree_files(bare, "main")
    assert session_relpath(2) in files and session_relpath(3) in files
    assert is_ancestor(bare, git(a, "rev-parse", "HEAD"), "main")


@pytest.mark.slow
def test_three_workspaces_editing_concurrently_converge_losslessly(tmp_path: Path, cli: Cli) -> None:
    bare = make_bare(tmp_path / "remote.git")
    roots = [workspace(tmp_path, name, bare, "[sync]\nmax_retries = 10\n") for name in ("a", "b", "c")]
    for root in roots:
        assert cli("-w", str(root), "sync").returncode == 0
    written: list[str] = []
    overwritten: list[str] = []  # the shared entry: each machine replaces its own previous summary
    failures: list[str] = []

    def machine(i: int, root: Path) -> None:
        for r in range(3):
            tag = f"w{i}r{r}"
            write_session(root, 100 * i + r, f"session {tag}")
            lines = {"memory/facts.md": f"- fact {tag}", "logs/tool-calls.md": f"2025-06-11T00:00:0{i}Z | s | {tag} | ok",
                     "index.md": f"| 2025-06-11 | {tag} | t | s | {session_relpath(100 * i + r)} |"}
            for rel, line in lines.items():
                append(root, rel, line)
            upsert_board(root, f"entry {tag}", f"own entry {tag}")
            upsert_board(root, "shared entry", f"shared summary {tag}")
            written.extend([*lines.values(), f"session {tag}", f"own entry {tag}"])
            overwritten.append(f"shared summary {tag}")
            done = kbsync("-w", str(root), "sync", timeout=120)
            if done.returncode not in (0, 1):
                failures.append(f"{tag}: {done.returncode} {done.stderr}")

    threads = [threading.Thread(target=machine, args=(i, root)) for i, root in enumerate(roots)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    for root in roots + roots[:2]:
        assert cli("-w", str(root), "sync").returncode in (0, 1)
    head = git(bare, "rev-parse", "main")
    for root in roots:
        assert git(root, "rev-parse", "HEAD") == head
        assert git(root, "status", "--porcelain") == ""
        for sha in git(root, "reflog", "--format=%H", "HEAD").split():
            assert is_ancestor(bare, sha, head), sha
    text = all_text(tree_files(bare, "main"))
    assert [line for line in written if line not in text] == []
    history = git(bare, "log", "-p", "main")
    assert [line for line in overwritten if line not in history] == []


def test_secret_in_what_would_be_sent_blocks_the_push(tmp_path: Path, cli: Cli) -> None:
    bare = make_bare(tmp_path / "remote.git")
    a = workspace(tmp_path, "a", bare)
    assert sync(open_ws(a)).exit_code == 0
    before = git(bare, "rev-parse", "main")
    append(a, "memory/facts.md", "- token ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8")  # split: no secret literal in the repo
    git(a, "commit", "-q", "--no-verify", "-am", "a person commits a token by hand")
    done = cli("-w", str(a), "sync")
    assert done.returncode == 1
    assert "memory/facts.md:2" in done.stderr and "nothing was sent" in done.stderr
    assert git(bare, "rev-parse", "main") == before


def test_daemon_syncs_only_where_a_remote_is_configured(tmp_path: Path) -> None:
    from kbsync.sync.syncer import remote_configured

    bare = make_bare(tmp_path / "remote.git")
    assert remote_configured(open_ws(workspace(tmp_path, "a", bare)))
    lonely = workspace(tmp_path, "b", bare)
    git(lonely, "remote", "remove", "origin")
    assert not remote_configured(open_ws(lonely))


def test_uncommitted_edit_in_the_way_is_kept_as_a_conflict_copy(tmp_path: Path) -> None:
    bare = make_bare(tmp_path / "remote.git")
    a, b = workspace(tmp_path, "a", bare), workspace(tmp_path, "b", bare)
    rel = write_session(a, 9, "first")
    sync(open_ws(a)), sync(open_ws(b))
    write_session(a, 9, "a's edit")
    sync(open_ws(a))
    broken = session_text(rel, body="b's edit, not yet valid").replace("role: assistant", "role: robot")
    (b / rel).write_text(broken, encoding="utf-8")
    result = sync(open_ws(b))
    assert "a's edit" in (b / rel).read_text(encoding="utf-8")
    copies = [p for p in (b / rel).parent.iterdir() if ".conflict-" in p.name]
    assert len(copies) == 1 and "b's edit, not yet valid" in copies[0].read_text(encoding="utf-8")
    assert result.pulled == [rel]


def test_git_mode_without_the_remote_is_a_configuration_error(tmp_path: Path, cli: Cli) -> None:
    root = workspace(tmp_path, "a", make_bare(tmp_path / "remote.git"))
    git(root, "remote", "remove", "origin")
    done = cli("-w", str(root), "sync")
    assert done.returncode == 2 and "git remote add origin" in done.stderr

"""kbsync.gitrepo on real repositories."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from kbsync.errors import GitError
from kbsync.git import objects as gitobjects
from kbsync.git import repo as gitrepo


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    return root


def test_unborn_head_and_first_commit(repo: Path) -> None:
    (repo / "a.md").write_text("a\n")
    assert gitrepo.head_sha(repo) is None
    assert gitrepo.changed_paths(repo) == ["a.md"]
    sha = gitrepo.commit_files(repo, [gitrepo.Staged("a.md", b"a\n")], "first", expected_head=None,
                               author=("kb", "kb@example.org"))
    assert sha and gitrepo.head_sha(repo) == sha
    assert git(repo, "log", "-1", "--format=%an <%ae> %s") == "kb <kb@example.org> first\n"
    assert gitrepo.changed_paths(repo) == []


def test_commits_the_given_bytes_not_the_work_tree(repo: Path) -> None:
    (repo / "a.md").write_text("on disk now\n")
    gitrepo.commit_files(repo, [gitrepo.Staged("a.md", b"validated\n")], "m", expected_head=None, author=("k", "k@x"))
    assert git(repo, "show", "HEAD:a.md") == "validated\n"
    assert gitrepo.changed_paths(repo) == ["a.md"]


def test_changed_means_bytes_that_differ_from_head_whatever_attributes_say(repo: Path) -> None:
    """`*.md text` makes git call a CRLF file committed as is modified (it would store LF); its bytes are HEAD's,
    so it is not."""
    files = [gitrepo.Staged(".gitattributes", b"*.md text\n"), gitrepo.Staged("a.md", b"a\r\nb\r\n"),
             gitrepo.Staged("b.md", b"b\n")]
    for f in files:
        (repo / f.relpath).write_bytes(f.data or b"")
    gitrepo.commit_files(repo, files, "m", expected_head=None, author=("k", "k@x"))
    later = time.time() + 5
    os.utime(repo / "a.md", (later, later))
    (repo / "b.md").write_bytes(b"b, edited\n")
    assert "a.md" in git(repo, "status", "--porcelain")
    assert gitrepo.changed_paths(repo) == ["b.md"]


def test_protocol_files_git_ignores_are_changed_and_named_with_their_rule(repo: Path) -> None:
    (repo / ".gitignore").write_text("sessions/*.md\n*.bin\n!sessions/keep.md\n")
    (repo / "sessions").mkdir()
    (repo / "sessions" / "x.md").write_text("x\n")
    (repo / "sessions" / "keep.md").write_text("k\n")
    (repo / "other.bin").write_bytes(b"\x00")
    assert gitrepo.changed_paths(repo) == [".gitignore", "sessions/keep.md", "sessions/x.md"]
    rules = gitrepo.ignore_rules(repo, ["sessions/x.md", "sessions/keep.md", "index.md"])
    assert rules == {"sessions/x.md": ".gitignore:1: sessions/*.md"}


def test_only_listed_paths_are_committed_and_deletions_work(repo: Path) -> None:
    for name in ("a.md", "b.md", "sessions/2025-06-11/x.md"):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(name)
    first = gitrepo.commit_files(repo, [gitrepo.Staged(n, n.encode()) for n in ("a.md", "b.md")], "m",
                                 expected_head=None, author=("k", "k@x"))
    (repo / "a.md").unlink()
    gitrepo.commit_files(repo, [gitrepo.Staged("a.md", None)], "rm", expected_head=first, author=("k", "k@x"))
    assert git(repo, "ls-tree", "-r", "--name-only", "HEAD").split() == ["b.md"]
    assert gitrepo.changed_paths(repo) == ["sessions/2025-06-11/x.md"]


def test_unchanged_tree_makes_no_commit(repo: Path) -> None:
    (repo / "a.md").write_text("a")
    sha = gitrepo.commit_files(repo, [gitrepo.Staged("a.md", b"a")], "m", expected_head=None, author=("k", "k@x"))
    again = gitrepo.commit_files(repo, [gitrepo.Staged("a.md", b"a")], "m", expected_head=sha, author=("k", "k@x"))
    assert again is None and gitrepo.head_sha(repo) == sha


def test_compare_and_swap_refuses_when_head_moved(repo: Path) -> None:
    (repo / "a.md").write_text("a")
    first = gitrepo.commit_files(repo, [gitrepo.Staged("a.md", b"a")], "m", expected_head=None, author=("k", "k@x"))
    git(repo, "commit", "-q", "--allow-empty", "-m", "someone else")
    moved = gitrepo.head_sha(repo)
    with pytest.raises(gitrepo.HeadMovedError):
        gitrepo.commit_files(repo, [gitrepo.Staged("a.md", b"b")], "m", expected_head=first, author=("k", "k@x"))
    assert gitrepo.head_sha(repo) == moved


def test_blobs_at(repo: Path) -> None:
    assert gitrepo.blobs_at(repo, None, ["a.md"]) == {"a.md": None}
    (repo / "a.md").write_text("x")
    sha = gitrepo.commit_files(repo, [gitrepo.Staged("d/a.md", "状态".encode())], "m", expected_head=None,
                               author=("k", "k@x"))
    assert gitrepo.blobs_at(repo, sha, ["d/a.md", "missing.md"]) == {"d/a.md": "状态".encode(), "missing.md": None}


def test_unicode_paths_round_trip(repo: Path) -> None:
    name = "sessions/2025-06-11/1432-a1b2c3d-合同风险梳理.md"
    (repo / name).parent.mkdir(parents=True)
    (repo / name).write_text("x")
    assert gitrepo.changed_paths(repo) == [name]
    gitrepo.commit_files(repo, [gitrepo.Staged(name, b"x")], "m", expected_head=None, author=("k", "k@x"))
    assert gitrepo.changed_paths(repo) == []


def test_index_lock_busy_then_released(repo: Path) -> None:
    lock = gitrepo.index_lock(repo)
    lock.write_text("")
    threading.Timer(0.3, lock.unlink).start()
    gitrepo.wait_index_unlocked(repo, 5.0)
    assert not lock.exists()


def test_index_lock_held_too_long_is_busy(repo: Path) -> None:
    gitrepo.index_lock(repo).write_text("")
    with pytest.raises(gitrepo.IndexLockedError) as info:
        gitrepo.wait_index_unlocked(repo, 0.2)
    assert not info.value.stale


def test_stale_index_lock_is_reported_not_deleted(repo: Path) -> None:
    lock = gitrepo.index_lock(repo)
    lock.write_text("")
    old = time.time() - 600
    os.utime(lock, (old, old))
    with pytest.raises(gitrepo.IndexLockedError) as info:
        gitrepo.wait_index_unlocked(repo, 5.0)
    assert info.value.stale and "stale" in str(info.value) and lock.exists()


def test_not_a_repository(tmp_path: Path) -> None:
    with pytest.raises(GitError, match="not a git repository"):
        gitrepo.changed_paths(tmp_path)


def test_the_index_agrees_with_head_after_commits_in_several_batches(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gitrepo, "INDEX_BATCH", 2)
    names = [f"d{i % 2}/f{i}.md" for i in range(5)]
    for name in names:
        (repo / name).parent.mkdir(exist_ok=True)
        (repo / name).write_text(name)
    first = gitrepo.commit_files(repo, [gitrepo.Staged(n, n.encode()) for n in names], "m", expected_head=None,
                                 author=("k", "k@x"))
    for name in names[:3]:
        (repo / name).unlink()
    gitrepo.commit_files(repo, [gitrepo.Staged(n, None) for n in names[:3]], "rm", expected_head=first,
                         author=("k", "k@x"))
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "ls-files").split() == sorted(names[3:])
    assert git(repo, "diff-files", "--name-only") == ""  # stat data recorded: nothing to re-hash


def test_ancestry_and_merge_base(repo: Path) -> None:
    first = gitrepo.commit_files(repo, [gitrepo.Staged("a.md", b"1")], "m", expected_head=None, author=("k", "k@x"))
    second = gitrepo.commit_files(repo, [gitrepo.Staged("a.md", b"2")], "m", expected_head=first, author=("k", "k@x"))
    assert first and second
    side = gitrepo.commit_tree(repo, gitrepo.tree_of(repo, first), [first], "side\n", ("k", "k@x"))
    lonely = gitrepo.commit_tree(repo, gitrepo.tree_of(repo, first), [], "no history\n", ("k", "k@x"))
    for _ in range(2):  # asked twice: the second answers come from what was learnt
        assert gitrepo.is_ancestor(repo, first, second) and not gitrepo.is_ancestor(repo, second, first)
        assert gitrepo.merge_base(repo, second, side) == first
        assert gitrepo.merge_base(repo, second, lonely) is None
        assert gitrepo.tree_of(repo, second) == git(repo, "rev-parse", f"{second}^{{tree}}").strip()
    with pytest.raises(GitError):
        gitrepo.merge_base(repo, first, "f" * 40)


def test_what_a_push_would_send_names_every_blob_even_with_a_line_break_in_its_path(repo: Path) -> None:
    first = gitrepo.commit_files(repo, [gitrepo.Staged("a.md", b"a")], "m", expected_head=None, author=("k", "k@x"))
    odd = "notes/odd\nname.md"
    second = gitrepo.commit_files(repo, [gitrepo.Staged(odd, b"token = x"), gitrepo.Staged("b.md", b"b")], "m",
                                  expected_head=first, author=("k", "k@x"))
    assert second
    sent = gitrepo.outgoing_blobs(repo, second, first)
    assert sorted(gitrepo.read_blobs(repo, [sha for _path, sha in sent])) == [b"b", b"token = x"]  # scanned too
    assert ("notes/odd", gitobjects.object_id("blob", b"token = x")) in sent  # git cuts the name at the break

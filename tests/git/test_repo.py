"""kbsync.gitrepo on real repositories."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from kbsync.errors import GitError
from kbsync.git import objects, repo


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture()
def work(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    return root


def test_unborn_head_and_first_commit(work: Path) -> None:
    (work / "a.md").write_text("a\n")
    assert repo.head_sha(work) is None
    assert repo.changed_paths(work) == ["a.md"]
    sha = repo.commit_files(work, [repo.Staged("a.md", b"a\n")], "first", expected_head=None,
                               author=("kb", "kb@example.org"))
    assert sha and repo.head_sha(work) == sha
    assert git(work, "log", "-1", "--format=%an <%ae> %s") == "kb <kb@example.org> first\n"
    assert repo.changed_paths(work) == []


def test_commits_the_given_bytes_not_the_work_tree(work: Path) -> None:
    (work / "a.md").write_text("on disk now\n")
    repo.commit_files(work, [repo.Staged("a.md", b"validated\n")], "m", expected_head=None, author=("k", "k@x"))
    assert git(work, "show", "HEAD:a.md") == "validated\n"
    assert repo.changed_paths(work) == ["a.md"]


def test_changed_means_bytes_that_differ_from_head_whatever_attributes_say(work: Path) -> None:
    """`*.md text` makes git call a CRLF file committed as is modified (it would store LF); its bytes are HEAD's,
    so it is not."""
    files = [repo.Staged(".gitattributes", b"*.md text\n"), repo.Staged("a.md", b"a\r\nb\r\n"),
             repo.Staged("b.md", b"b\n")]
    for f in files:
        (work / f.relpath).write_bytes(f.data or b"")
    repo.commit_files(work, files, "m", expected_head=None, author=("k", "k@x"))
    later = time.time() + 5
    os.utime(work / "a.md", (later, later))
    (work / "b.md").write_bytes(b"b, edited\n")
    assert "a.md" in git(work, "status", "--porcelain")
    assert repo.changed_paths(work) == ["b.md"]


def test_protocol_files_git_ignores_are_changed_and_named_with_their_rule(work: Path) -> None:
    (work / ".gitignore").write_text("sessions/*.md\n*.bin\n!sessions/keep.md\n")
    (work / "sessions").mkdir()
    (work / "sessions" / "x.md").write_text("x\n")
    (work / "sessions" / "keep.md").write_text("k\n")
    (work / "other.bin").write_bytes(b"\x00")
    assert repo.changed_paths(work) == [".gitignore", "sessions/keep.md", "sessions/x.md"]
    rules = repo.ignore_rules(work, ["sessions/x.md", "sessions/keep.md", "index.md"])
    assert rules == {"sessions/x.md": ".gitignore:1: sessions/*.md"}


def test_only_listed_paths_are_committed_and_deletions_work(work: Path) -> None:
    for name in ("a.md", "b.md", "sessions/2025-06-11/x.md"):
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(name)
    first = repo.commit_files(work, [repo.Staged(n, n.encode()) for n in ("a.md", "b.md")], "m",
                                 expected_head=None, author=("k", "k@x"))
    (work / "a.md").unlink()
    repo.commit_files(work, [repo.Staged("a.md", None)], "rm", expected_head=first, author=("k", "k@x"))
    assert git(work, "ls-tree", "-r", "--name-only", "HEAD").split() == ["b.md"]
    assert repo.changed_paths(work) == ["sessions/2025-06-11/x.md"]


def test_unchanged_tree_makes_no_commit(work: Path) -> None:
    (work / "a.md").write_text("a")
    sha = repo.commit_files(work, [repo.Staged("a.md", b"a")], "m", expected_head=None, author=("k", "k@x"))
    again = repo.commit_files(work, [repo.Staged("a.md", b"a")], "m", expected_head=sha, author=("k", "k@x"))
    assert again is None and repo.head_sha(work) == sha


def test_compare_and_swap_refuses_when_head_moved(work: Path) -> None:
    (work / "a.md").write_text("a")
    first = repo.commit_files(work, [repo.Staged("a.md", b"a")], "m", expected_head=None, author=("k", "k@x"))
    git(work, "commit", "-q", "--allow-empty", "-m", "someone else")
    moved = repo.head_sha(work)
    with pytest.raises(repo.HeadMovedError):
        repo.commit_files(work, [repo.Staged("a.md", b"b")], "m", expected_head=first, author=("k", "k@x"))
    assert repo.head_sha(work) == moved


def test_blobs_at(work: Path) -> None:
    assert repo.blobs_at(work, None, ["a.md"]) == {"a.md": None}
    (work / "a.md").write_text("x")
    sha = repo.commit_files(work, [repo.Staged("d/a.md", "状态".encode())], "m", expected_head=None,
                               author=("k", "k@x"))
    assert repo.blobs_at(work, sha, ["d/a.md", "missing.md"]) == {"d/a.md": "状态".encode(), "missing.md": None}


def test_unicode_paths_round_trip(work: Path) -> None:
    name = "sessions/2025-06-11/1432-a1b2c3d-合同风险梳理.md"
    (work / name).parent.mkdir(parents=True)
    (work / name).write_text("x")
    assert repo.changed_paths(work) == [name]
    repo.commit_files(work, [repo.Staged(name, b"x")], "m", expected_head=None, author=("k", "k@x"))
    assert repo.changed_paths(work) == []


def test_index_lock_busy_then_released(work: Path) -> None:
    lock = repo.index_lock(work)
    lock.write_text("")
    threading.Timer(0.3, lock.unlink).start()
    repo.wait_index_unlocked(work, 5.0)
    assert not lock.exists()


def test_index_lock_held_too_long_is_busy(work: Path) -> None:
    repo.index_lock(work).write_text("")
    with pytest.raises(repo.IndexLockedError) as info:
        repo.wait_index_unlocked(work, 0.2)
    assert not info.value.stale


def test_stale_index_lock_is_reported_not_deleted(work: Path) -> None:
    lock = repo.index_lock(work)
    lock.write_text("")
    old = time.time() - 600
    os.utime(lock, (old, old))
    with pytest.raises(repo.IndexLockedError) as info:
        repo.wait_index_unlocked(work, 5.0)
    assert info.value.stale and "stale" in str(info.value) and lock.exists()


def test_not_a_repository(tmp_path: Path) -> None:
    with pytest.raises(GitError, match="not a git repository"):
        repo.changed_paths(tmp_path)


def test_the_index_agrees_with_head_after_commits_in_several_batches(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(repo, "INDEX_BATCH", 2)
    names = [f"d{i % 2}/f{i}.md" for i in range(5)]
    for name in names:
        (work / name).parent.mkdir(exist_ok=True)
        (work / name).write_text(name)
    first = repo.commit_files(work, [repo.Staged(n, n.encode()) for n in names], "m", expected_head=None,
                                 author=("k", "k@x"))
    for name in names[:3]:
        (work / name).unlink()
    repo.commit_files(work, [repo.Staged(n, None) for n in names[:3]], "rm", expected_head=first,
                         author=("k", "k@x"))
    assert git(work, "status", "--porcelain") == ""
    assert git(work, "ls-files").split() == sorted(names[3:])
    assert git(work, "diff-files", "--name-only") == ""  # stat data recorded: nothing to re-hash


def test_ancestry_and_merge_base(work: Path) -> None:
    first = repo.commit_files(work, [repo.Staged("a.md", b"1")], "m", expected_head=None, author=("k", "k@x"))
    second = repo.commit_files(work, [repo.Staged("a.md", b"2")], "m", expected_head=first, author=("k", "k@x"))
    assert first and second
    side = repo.commit_tree(work, repo.tree_of(work, first), [first], "side\n", ("k", "k@x"))
    lonely = repo.commit_tree(work, repo.tree_of(work, first), [], "no history\n", ("k", "k@x"))
    for _ in range(2):  # asked twice: the second answers come from what was learnt
        assert repo.is_ancestor(work, first, second) and not repo.is_ancestor(work, second, first)
        assert repo.merge_base(work, second, side) == first
        assert repo.merge_base(work, second, lonely) is None
        assert repo.tree_of(work, second) == git(work, "rev-parse", f"{second}^{{tree}}").strip()
    with pytest.raises(GitError):
        repo.merge_base(work, first, "f" * 40)


def test_what_a_push_would_send_names_every_blob_even_with_a_line_break_in_its_path(work: Path) -> None:
    first = repo.commit_files(work, [repo.Staged("a.md", b"a")], "m", expected_head=None, author=("k", "k@x"))
    odd = "notes/odd\nname.md"
    second = repo.commit_files(work, [repo.Staged(odd, b"token = x"), repo.Staged("b.md", b"b")], "m",
                                  expected_head=first, author=("k", "k@x"))
    assert second
    sent = repo.outgoing_blobs(work, second, first)
    assert sorted(repo.read_blobs(work, [sha for _path, sha in sent])) == [b"b", b"token = x"]  # scanned too
    assert ("notes/odd", objects.object_id("blob", b"token = x")) in sent  # git cuts the name at the break

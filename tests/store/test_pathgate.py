"""The path gate on this machine's disk: never through a linked folder, never over a link."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbsync.errors import InputError
from kbsync.store import fsio
from kbsync.store.pathgate import UnsafePathError, checked, disk_refusal, output_refusal, remote_refusal


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "sessions").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (ws / "notes").symlink_to(tmp_path / "outside")
    (ws / "sessions" / "link.md").symlink_to("../index.md")
    return ws


def test_a_linked_folder_on_the_way_or_a_link_at_the_end_is_refused(root: Path) -> None:
    assert "passes through notes" in (disk_refusal(root, "notes/deep/x.md") or "")
    assert "is a symlink" in (disk_refusal(root, "sessions/link.md") or "")
    assert disk_refusal(root, "sessions/link.md", final=False) is None  # removing a link is not following it
    assert disk_refusal(root, "sessions/new/x.md") is None and disk_refusal(root, "memory/x.md") is None
    with pytest.raises(UnsafePathError, match="passes through notes"):
        checked(root, "notes/x.md")
    with pytest.raises(UnsafePathError, match="git's folder"):
        checked(root, ".git/config")
    assert checked(root, "sessions/x.md") == root / "sessions" / "x.md"


def test_a_remote_tree_is_judged_by_its_entries_first_then_by_the_disk(root: Path) -> None:
    first = remote_refusal([("a.md", "100644"), (".git/x", "100644")], root)
    assert first is not None and first[0] == ".git/x"
    assert remote_refusal([("notes/x.md", "100644")]) is None  # no disk given: the rules alone
    found = remote_refusal([("notes/x.md", "100644")], root, written=["notes/x.md"])
    assert found is not None and found[0] == "notes/x.md"
    assert remote_refusal([], root, removed=["sessions/link.md"]) is None


def test_an_export_never_lands_in_a_state_folder_or_over_a_link(root: Path, tmp_path: Path) -> None:
    assert output_refusal(tmp_path / "out" / "a.html") is None
    assert output_refusal(root / ".git" / "hooks" / "a.html") is not None
    assert output_refusal(root / ".KBSYNC" / "a.html") is not None
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "a.html").symlink_to(root / "index.md")
    assert "symlink" in (output_refusal(tmp_path / "out" / "a.html") or "")


def test_the_guarded_replace_never_replaces_a_link(root: Path) -> None:
    (root / "index.md").write_bytes(b"kept\n")
    link = root / "sessions" / "link.md"
    with pytest.raises(InputError, match="symlink"):  # not read through it either
        fsio.read_with_fingerprint(link)
    _data, fp = fsio.read_with_fingerprint(root / "index.md")
    with pytest.raises(InputError, match="symlink"):
        fsio.guarded_replace(link, b"new\n", fp, backup_to=lambda _b: None, check=lambda _b: True)
    assert link.is_symlink() and (root / "index.md").read_bytes() == b"kept\n"

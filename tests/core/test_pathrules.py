"""The path gate's pure rules: every spelling of git's folder that git's verify_path refuses, and more."""

from __future__ import annotations

import pytest

from kbsync.core.pathrules import HFS_IGNORABLE, first_refused, folded, mode_refusal, refusal

REFUSED = [
    ("", "empty"), ("/etc/passwd", "absolute"), ("../x", ".."), ("a/../../x", ".."), ("a/..", ".."),
    ("a\\..\\b", ".."), ("a//b", "normalised"), ("./a", "normalised"), ("a/./b", "normalised"),
    ("a/", "normalised"), ("a\nb.md", "control"), ("a\x00b", "control"), ("a\x7fb", "control"),
    (".git", ".git"), (".git/config", ".git"), ("x/.git/config", ".git"), (".GIT/hooks/x", ".git"),
    (".Git/x", ".git"), (".git./x", ".git"), (".git /x", ".git"), (".git. . /x", ".git"),
    ("git~1/x", ".git"), ("GIT~1/x", ".git"), (".git::$INDEX_ALLOCATION/x", ".git"), ("a\\.git\\x", ".git"),
    (".kbsync/config.toml", ".kbsync"), (".KBSYNC/config.toml", ".kbsync"), (".kbsync./x", ".kbsync"),
    (".kb\u200csync/x", ".kbsync"),
]


@pytest.mark.parametrize(("path", "says"), REFUSED)
def test_refused(path: str, says: str) -> None:
    why = refusal(path)
    assert why is not None and says in why, (path, why)


@pytest.mark.parametrize("code_point", sorted(HFS_IGNORABLE))
def test_every_hfs_ignorable_code_point_inside_dotgit_is_refused(code_point: str) -> None:
    assert folded(f".g{code_point}it") == ".git"
    assert refusal(f".{code_point}git/x") is not None


ACCEPTED = [
    "index.md", "sessions/2025-06-11/1432-a9993e3-合同.md", ".gitignore", ".gitattributes", ".gitmodules",
    "memory/.git-notes.md", "git~10/x", "a.git/x", "git/x", "docs/.kbsync/x", ".kbsync-allow", "a b/c d.md",
    "..a/b", "a../b",
]


@pytest.mark.parametrize("path", ACCEPTED)
def test_accepted(path: str) -> None:
    assert refusal(path) is None


def test_only_regular_files_are_accepted_from_a_tree() -> None:
    assert mode_refusal("100644") is None and mode_refusal("100755") is None
    assert "symbolic link" in (mode_refusal("120000") or "")
    assert "submodule" in (mode_refusal("160000") or "")
    assert first_refused([("a.md", "100644"), ("l", "120000"), (".git/x", "100644")]) == (
        "l", mode_refusal("120000"))
    assert first_refused([("a.md", "100644")]) is None

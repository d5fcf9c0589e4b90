"""Unified-diff hunks applied to their old bytes: checked against real `git diff` output on random texts."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from kbsync.sync.transports import hunks

WORDS = ["alpha", "beta", "", "  indented", "合同 条款", "- [ ] task", "##  标题", "x\r", "tail"]


def git_patch(tmp: Path, old: bytes, new: bytes) -> str | None:
    """The hunks `git diff` gives from `old` to `new`, without its header lines (as GitHub gives them)."""
    (tmp / "old").write_bytes(old)
    (tmp / "new").write_bytes(new)
    out = subprocess.run(["git", "diff", "--no-index", "--no-color", "old", "new"], cwd=tmp,
                         capture_output=True).stdout.decode("utf-8")
    at = out.find("\n@@")
    return out[at + 1:].removesuffix("\n") if at >= 0 else None


def text(rng: random.Random, lines: int) -> bytes:
    body = "\n".join(rng.choice(WORDS) for _ in range(lines))
    return (body + ("\n" if rng.random() < 0.7 else "")).encode("utf-8")


def edited(rng: random.Random, old: bytes) -> bytes:
    rows = old.decode("utf-8").split("\n")
    for _ in range(rng.randint(1, 4)):
        at = rng.randint(0, len(rows))
        action = rng.choice(["insert", "delete", "change"])
        if action == "insert" or not rows:
            rows.insert(at, rng.choice(WORDS))
        elif action == "delete":
            del rows[min(at, len(rows) - 1)]
        else:
            rows[min(at, len(rows) - 1)] = rng.choice(WORDS) + "!"
    return "\n".join(rows).encode("utf-8")


def test_random_edits_round_trip_through_git_diff(tmp_path: Path) -> None:
    rng = random.Random(20261201)
    cases = 0
    for _ in range(80):
        old = text(rng, rng.randint(0, 40))
        new = edited(rng, old)
        patch = git_patch(tmp_path, old, new)
        if patch is None:
            continue
        assert hunks.apply(old, patch) == new, (old, new, patch)
        cases += 1
    assert cases > 50


@pytest.mark.parametrize(("old", "new"), [
    (b"", b"first\nsecond\n"),
    (b"a\nb\n", b""),
    (b"a\nb", b"a\nb\n"),
    (b"a\nb\n", b"a\nb"),
    (b"a\r\nb\r\n", b"a\r\nc\r\n"),
])
def test_edges_of_newlines_and_empty_files(tmp_path: Path, old: bytes, new: bytes) -> None:
    patch = git_patch(tmp_path, old, new)
    assert patch is not None
    assert hunks.apply(old, patch) == new


def test_hunks_that_do_not_fit_give_none(tmp_path: Path) -> None:
    old, new = b"one\ntwo\nthree\n", b"one\n2\nthree\n"
    patch = git_patch(tmp_path, old, new)
    assert patch is not None
    assert hunks.apply(b"one\nTWO\nthree\n", patch) is None  # a removed line that is not there
    assert hunks.apply(b"", patch) is None  # a hunk past the end
    assert hunks.apply(old, "not a diff at all") is None
    assert hunks.apply(old, "@@ -2 +2 @@\n-two\n+\ud800") is not None  # a lone surrogate: bytes no sha will match
    assert hunks.apply(old, "@@ -2,1 +2,1 @@\n-two\n+2\n@@ -1,1 +1,1 @@\n-one\n+1") is None  # hunks out of order

"""Repositories left in the middle of a git operation, the way a person leaves them: real git commands."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Callable

from helpers.daemon import git, write


def attempt(root: Path, *args: str) -> int:
    """`git ARGS`, expected to stop half-way (a conflict): its exit status."""
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True).returncode


def diverged(root: Path) -> None:
    """main and the branch `other` each change notes.md differently since their common commit."""
    write(root, "notes.md", "base\n", age_s=60)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-qb", "other")
    write(root, "notes.md", "other side\n", age_s=60)
    git(root, "commit", "-qam", "other side")
    git(root, "checkout", "-q", "main")
    write(root, "notes.md", "main side\n", age_s=60)
    git(root, "commit", "-qam", "main side")


def stopped_rebase(root: Path) -> None:
    diverged(root)
    assert attempt(root, "rebase", "other") != 0


def left_merge(root: Path) -> None:
    diverged(root)
    assert attempt(root, "merge", "other") != 0


def stopped_cherry_pick(root: Path) -> None:
    diverged(root)
    assert attempt(root, "cherry-pick", "other") != 0


def stopped_revert(root: Path) -> None:
    diverged(root)
    write(root, "notes.md", "main side, edited\n", age_s=60)
    git(root, "commit", "-qam", "edit")
    assert attempt(root, "revert", "--no-edit", "HEAD~1") != 0


def bisecting(root: Path) -> None:
    diverged(root)
    git(root, "bisect", "start")


def unmerged_only(root: Path) -> None:
    """A merge conflict whose MERGE_HEAD is gone (`git merge --quit`): only the index still says so."""
    left_merge(root)
    git(root, "merge", "--quit")


def detached(root: Path) -> None:
    diverged(root)
    git(root, "checkout", "-q", "--detach")


# (how to get there, what kbsync says, how a person ends it)
STATES: dict[str, tuple[Callable[[Path], None], str, tuple[str, ...]]] = {
    "rebase": (stopped_rebase, "git rebase in progress", ("rebase", "--abort")),
    "merge": (left_merge, "git merge in progress", ("merge", "--abort")),
    "cherry-pick": (stopped_cherry_pick, "git cherry-pick in progress", ("cherry-pick", "--abort")),
    "revert": (stopped_revert, "git revert in progress", ("revert", "--abort")),
    "bisect": (bisecting, "git bisect in progress", ("bisect", "reset")),
    "unmerged": (unmerged_only, "unmerged paths in git's index", ("reset", "-q", "--merge")),
    "detached": (detached, "detached HEAD", ("checkout", "-q", "main")),
}

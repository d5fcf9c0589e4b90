"""Whether git is in the middle of an operation a person started, during which kbsync leaves git alone.

A merge, rebase, cherry-pick, revert, `git am` or bisect in progress, unmerged index entries, or a
detached HEAD: committing then would land in the middle of that operation (conflict markers committed
as content, or a commit that `git rebase --abort` throws away). The daemon, `kbsync commit` and
`kbsync sync` pause while this says so, and go on by themselves once it returns None.

Cheap: a few stats in the git folder, and one `git ls-files --unmerged` when none of them says anything and
git's index changed since it last found no unmerged entry (git replaces the index file whole on every
write, so its identity and time tell whether its entries can have changed).
"""

from __future__ import annotations

import os
from pathlib import Path

from kbsync import proc

# (what git leaves in its folder while the operation runs, the operation), in the order git checks them
MARKERS = (
    ("rebase-merge", "rebase"),
    ("rebase-apply/applying", "am"),
    ("rebase-apply", "rebase"),
    ("MERGE_HEAD", "merge"),
    ("CHERRY_PICK_HEAD", "cherry-pick"),
    ("REVERT_HEAD", "revert"),
    ("sequencer", "cherry-pick or revert"),
    ("BISECT_LOG", "bisect"),
)


def git_dir(root: Path) -> Path | None:
    """The repository's git folder (`.git`, or where a worktree's `.git` file points); None outside git."""
    dot = root / ".git"
    if dot.is_dir():
        return dot
    try:
        text = dot.read_text(encoding="utf-8", errors="replace") if dot.is_file() else ""
    except OSError:
        return None
    target = text.strip().removeprefix("gitdir:").strip() if text.startswith("gitdir:") else ""
    return (root / target).resolve() if target else None


def in_progress(root: Path) -> str | None:
    """What git is in the middle of ("git rebase in progress", "unmerged paths ...", "detached HEAD ..."),
    or None when kbsync may commit."""
    folder = git_dir(root)
    if folder is None:
        return None
    for marker, operation in MARKERS:
        if (folder / marker).exists():
            return f"git {operation} in progress"
    if _unmerged(root, folder):
        return "unmerged paths in git's index (a conflict is not resolved yet)"
    if _detached(folder):
        return "detached HEAD (check out a branch)"
    return None


_MERGED: dict[Path, tuple[int, int, int, int]] = {}  # git folder -> its index file as last found without unmerged entries


def _unmerged(root: Path, folder: Path) -> bool:
    if not os.path.lexists(folder / "index"):
        return False  # no index, no entries (a repository whose commits were all made without one)
    index = _identity(folder / "index")
    if index is not None and _MERGED.get(folder) == index:
        return False
    done = proc.run(["git", "ls-files", "--unmerged", "-z"], cwd=root, check=False, timeout=60)
    found = done.returncode == 0 and bool(done.stdout)
    if index is not None and not found and _identity(folder / "index") == index:
        _MERGED[folder] = index
    return found


def _identity(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _detached(folder: Path) -> bool:
    try:
        head = (folder / "HEAD").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return not head.startswith("ref:")

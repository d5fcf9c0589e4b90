"""The path gate: the one check every writer of outside data passes before it writes a path.

Outside data is a remote's tree (git or the GitHub API), a scan source's names, an
export's output names. kbsync.core.pathrules holds the rules that need only the path
(relative, normalised, no `..`, never git's folder in any spelling, never `.kbsync/`,
regular files only); this module adds what only this machine's disk can tell: no parent
of the path is a symlink (each is lstat'ed from the workspace root down), and the path
itself is not one (a write replaces a file, it never follows a link).
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Iterable

from kbsync.core import pathrules, protocol
from kbsync.errors import InputError, RemoteError


class UnsafePathError(InputError):
    """A path kbsync was asked to write is refused by the gate; nothing was written."""


def disk_refusal(root: Path, relpath: str, *, final: bool = True) -> str | None:
    """Why writing `relpath` under `root` would pass through a symlink on this machine (or, with `final`,
    replace one), or None. Components that do not exist yet are created by the write: nothing to check."""
    parts = relpath.split("/")
    here = root
    for n, part in enumerate(parts):
        here = here / part
        try:
            mode = here.lstat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            return None
        last = n == len(parts) - 1
        if stat.S_ISLNK(mode) and not last:
            return f"passes through {'/'.join(parts[:n + 1])}, a symlink on this machine"
        if stat.S_ISLNK(mode) and final:
            return "is a symlink on this machine, which kbsync never replaces or follows"
    return None


def refusal(root: Path, relpath: str) -> str | None:
    """Why the gate refuses writing `relpath` under `root`, or None when it may be written."""
    return pathrules.refusal(relpath) or disk_refusal(root, relpath)


def checked(root: Path, relpath: str) -> Path:
    """`root / relpath` once the gate accepts it; UnsafePathError naming the path and why otherwise."""
    why = refusal(root, relpath)
    if why:
        raise UnsafePathError(f"refused: the path {why}; nothing was written", path=relpath)
    return root / relpath


def output_refusal(dest: Path) -> str | None:
    """Why a file a person asked for (an export) must not be written at `dest`, or None: it would land in a
    git or kbsync state folder, or replace a symlink."""
    if any(pathrules.folded(part) in (".git", protocol.STATE_DIR) for part in dest.absolute().parts):
        return "lies in a .git or .kbsync folder, which kbsync never writes into"
    if dest.is_symlink():
        return "is a symlink, which kbsync never replaces or follows"
    return None


def remote_refusal(entries: Iterable[tuple[str, str]], root: Path | None = None, written: Iterable[str] = (),
                   removed: Iterable[str] = ()) -> tuple[str, str] | None:
    """The first (path, why) the gate refuses in a remote tree: among its (path, mode) `entries` by the rules;
    then, on this machine's disk under `root`, among the paths an integration would write or remove."""
    found = pathrules.first_refused(entries)
    if found or root is None:
        return found
    on_disk = [(p, True) for p in written] + [(p, False) for p in removed]
    return next(((p, why) for p, final in on_disk if (why := disk_refusal(root, p, final=final))), None)


def check_remote_tree(commit: str, entries: Iterable[tuple[str, str]], root: Path | None = None,
                      written: Iterable[str] = (), removed: Iterable[str] = ()) -> None:
    """RemoteError, in one line naming the entry and the commit, when `remote_refusal` finds one."""
    found = remote_refusal(entries, root, written, removed)
    if found:
        path, why = found
        raise RemoteError(f"refused the remote commit {commit[:12]}: its entry {path!r} {why}; nothing of it was "
                          "written. Remove that entry from the remote branch with git, then sync again")

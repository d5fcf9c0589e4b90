"""Which paths that came from outside kbsync may write: the pure half of the path gate (kbsync.store.pathgate).

A path is accepted only if it is relative and normalised (no empty, `.` or `..` component, no
leading or trailing slash), holds no control character, has no component that is git's own
folder in any spelling git itself refuses (`.git` in any case; the NTFS forms `.git ` / `.git.`
/ `git~1` / `.git::$INDEX_ALLOCATION`; the HFS+ forms with ignorable code points such as
`.g\u200cit`), and does not lie in kbsync's state folder `.kbsync/` (in any of those spellings
either). Only regular files are accepted from a tree: symbolic links and submodules never are.
"""

from __future__ import annotations

import re
from typing import Final, Iterable

from kbsync.core import protocol

# Code points HFS+ ignores when it compares names (git's is_hfs_dotgit skips the same ones).
HFS_IGNORABLE: Final = frozenset("\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                                 "\u206a\u206b\u206c\u206d\u206e\u206f\ufeff")
REGULAR_MODES: Final = ("100644", "100755")
_NTFS_TAIL: Final = re.compile(r"[. ]*(?::.*)?")  # NTFS drops trailing dots and spaces; `:` starts a stream name
_NTFS_SHORT_GIT: Final = "git~1"
_MODE_NAMES: Final = {"120000": "a symbolic link", "160000": "a submodule", "040000": "a folder"}


def folded(component: str) -> str:
    """A path component as a case-insensitive NTFS or HFS+ filesystem compares it: every spelling of `.git`
    becomes `.git`, of `.kbsync` becomes `.kbsync`."""
    name = "".join(c for c in component if c not in HFS_IGNORABLE).lower()
    for stem in (".git", _NTFS_SHORT_GIT):
        if name.startswith(stem) and _NTFS_TAIL.fullmatch(name[len(stem):]):
            return ".git"
    stripped = name.rstrip(". ")
    return stripped if stripped == protocol.STATE_DIR else name


def refusal(relpath: str) -> str | None:
    """Why `relpath` must not be written from outside data, or None when it may be."""
    if not relpath:
        return "is empty"
    if relpath.startswith("/"):
        return "is absolute"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in relpath):
        return "holds a control character"
    parts = relpath.split("/")
    for n, part in enumerate(parts):
        for piece in part.split("\\"):  # git on Windows splits at a backslash too
            if piece == "..":
                return "climbs out with `..`"
            if folded(piece) == ".git":
                return "writes into git's folder (.git)"
        if part in ("", "."):
            return "is not normalised (an empty or `.` component)"
        if n == 0 and folded(part) == protocol.STATE_DIR:
            return "writes into kbsync's own folder (.kbsync/), which no sync may change"
    return None


def mode_refusal(mode: str) -> str | None:
    """Why a tree entry of `mode` is never written to the work tree (links, submodules), or None for a file."""
    if mode in REGULAR_MODES:
        return None
    return f"is {_MODE_NAMES.get(mode, f'an entry of mode {mode}')}, which kbsync never writes to the work tree"


def first_refused(entries: Iterable[tuple[str, str]]) -> tuple[str, str] | None:
    """The first (path, reason) among (path, mode) entries that the gate refuses, or None."""
    for path, mode in entries:
        why = refusal(path) or mode_refusal(mode)
        if why:
            return path, why
    return None

"""One walk of a workspace's folders for `kbsync status`, each folder's listing kept between walks while the
folder stays as it was.

A folder's entries change only with its inode's change time (a file made, removed or renamed in it moves its
mtime and ctime; a chmod or chown of the folder moves its ctime), so a walk looks at each folder (one stat)
and lists again only those whose device, inode or ctime differ from when they were listed, and those that
changed less than RACY_NS before they were listed (a second change in the same tick of the file system's
clock would leave the ctime as it was). Whether an entry is a folder, a regular file, a symlink or something
else comes from the listing itself, without a look at each entry. Nothing about the files themselves is kept:
what can change in a file without its folder changing (its text, its permissions) is looked at by the caller.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from kbsync.core import protocol

DIR, FILE, LINK, OTHER = range(4)  # what an entry is, from its folder's listing
RACY_NS = 2_000_000_000


@dataclass(frozen=True)
class Folder:
    rel: str  # its workspace-relative prefix: "" for the root, else ending in "/"
    path: str
    entries: tuple[tuple[str, int], ...]  # (name, kind) of each entry, in the listing's order
    error: str | None = None  # why it could not be listed (then it has no entries)
    # what is derived from the listing, kept with it (its files by suffix, its entries by kind)
    derived: dict[object, tuple[str, ...]] = field(default_factory=dict, compare=False, repr=False)

    def path_of(self, name: str) -> str:
        return f"{self.path}{os.sep}{name}"

    def named(self, suffix: str | tuple[str, ...]) -> tuple[str, ...]:
        """The workspace-relative paths of its entries ending in `suffix` that are not folders, in listing order
        (its symlinks so named among them: whether one points to a folder is for the caller to ask)."""
        return self._derive(suffix, lambda: tuple(f"{self.rel}{name}" for name, kind in self.entries
                                                  if kind != DIR and name.endswith(suffix)))

    def of_kind(self, kind: int) -> tuple[str, ...]:
        """The names of its entries of this kind, in listing order."""
        return self._derive(kind, lambda: tuple(name for name, k in self.entries if k == kind))

    def kept(self, make: Callable[[Folder], tuple[str, ...]]) -> tuple[str, ...]:
        """`make(self)`: what `make` derives from this listing, made once per listing and kept with it."""
        return self._derive(make, lambda: make(self))

    def _derive(self, key: object, make: Callable[[], tuple[str, ...]]) -> tuple[str, ...]:
        got = self.derived.get(key)
        if got is None:
            got = self.derived[key] = make()
        return got


Kept = tuple[tuple[int, int, int], Folder]  # a folder's key (device, inode, ctime) when listed, and its listing
_kept: dict[str, dict[str, Kept]] = {}  # root -> folder path -> (its key, listing)
_sorted: dict[tuple[str, object], tuple[list[Folder], list[str]]] = {}  # (root, suffix) -> (the walk, its files)
_lock = threading.Lock()


STEP_FOLDERS = 64  # folders a walk looks at between two calls of its `between` (a millisecond or two)


def walk(root: Path, between: Callable[[], None] | None = None) -> list[Folder]:
    """Every folder of the workspace at `root` (.git and .kbsync at the top left out, a symlink to a folder not
    entered), each with its listing: kept from the last walk while the folder is unchanged, listed again
    otherwise. A folder that cannot be listed comes with the reason; one gone meanwhile is left out.

    A walk in steps (given `between`: a warm-up in the background, which waits there while answers are made)
    keeps the listings it has made so far every STEP_FOLDERS folders before it calls `between`, so a walk that
    runs meanwhile on another thread reuses them. A listing is whole before it is kept, and which walk made it
    does not matter: its folder's key is checked before it is used."""
    key = str(root)
    with _lock:
        kept = _kept.get(key, {})
    seen: dict[str, Kept] = {}
    out: list[Folder] = []
    stack = [("", str(root))]
    looked = 0
    while stack:
        if between is not None and looked and not looked % STEP_FOLDERS:
            kept = _keep(key, seen)
            between()
        looked += 1
        rel, path = stack.pop()
        folder = _listing(rel, path, kept, seen)
        if folder is None:
            continue
        out.append(folder)
        stack += [(f"{rel}{name}/", folder.path_of(name)) for name in folder.of_kind(DIR)
                  if not (rel == "" and name in protocol.IGNORED_DIRS)]
    with _lock:
        _kept[key] = seen  # folders gone since are forgotten
    return out


def _keep(key: str, seen: dict[str, Kept]) -> dict[str, Kept]:
    """Add the listings a walk has made so far to those kept (a new dict: one being read is never changed);
    what is kept now, which another walk may have added to."""
    with _lock:
        kept = _kept[key] = {**_kept.get(key, {}), **seen}
    return kept


def _listing(rel: str, path: str, kept: dict[str, Kept], seen: dict[str, Kept]) -> Folder | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return Folder(rel, path, (), _reason(exc))
    key = (st.st_dev, st.st_ino, st.st_ctime_ns)
    was = kept.get(path)
    if was is not None and was[0] == key:
        seen[path] = was
        return was[1]
    listed_at = time.time_ns()
    try:
        with os.scandir(path) as listing:
            folder = Folder(rel, path, tuple((e.name, _kind(e)) for e in listing))
    except FileNotFoundError:
        return None
    except OSError as exc:
        return Folder(rel, path, (), _reason(exc))
    if listed_at - st.st_ctime_ns >= RACY_NS:
        seen[path] = (key, folder)
    return folder


def _kind(entry: os.DirEntry[str]) -> int:
    try:
        if entry.is_dir(follow_symlinks=False):
            return DIR
        if entry.is_file(follow_symlinks=False):
            return FILE
        return LINK if entry.is_symlink() else OTHER
    except OSError:
        return OTHER


def _reason(exc: OSError) -> str:
    return (exc.strerror or str(exc)).lower()


def files(folders: list[Folder], suffix: str | tuple[str, ...]) -> list[str]:
    """The workspace-relative paths of the files ending in `suffix`, sorted, as `Workspace.iter_files` lists
    them (a symlink to a folder is not one; a FIFO or a dangling symlink so named is). The sorted list is kept
    until a walk gives another folder or listing."""
    key = (folders[0].path if folders else "", suffix)
    with _lock:
        was = _sorted.get(key)
    if was is not None and len(was[0]) == len(folders) and all(a is b for a, b in zip(was[0], folders)):
        named = was[1]
    else:
        named = sorted(rel for folder in folders for rel in folder.named(suffix))
        with _lock:
            _sorted[key] = (list(folders), named)
    links = {f"{folder.rel}{name}" for folder in folders for name in folder.of_kind(LINK)
             if os.path.isdir(folder.path_of(name))}
    return [rel for rel in named if rel not in links] if links else list(named)

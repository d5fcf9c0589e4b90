"""git's object formats, pure: object ids, loose-object encoding, tree entries, and
rewriting a few paths of a tree without reading the rest of it.

kbsync.git.repo does the I/O: it reads the trees `dirs_to_read` names (one
`git cat-file --batch`), hands them to `rewrite`, and stores the objects it
returns. Only the folders on the changed paths are read and written, so a commit
of one file in a 12,000-file workspace touches four or five small trees.
"""

from __future__ import annotations

import hashlib
import zlib
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

TREE_MODE = "40000"

Entries = dict[str, tuple[str, str]]  # name -> (mode, sha hex), one tree's direct entries
Change = tuple[str, str, str | None]  # (relpath, mode, blob sha), or sha None: remove the path


def object_id(kind: str, data: bytes) -> str:
    """The sha-1 git gives an object of `kind` ("blob", "tree", "commit") holding `data`."""
    return hashlib.sha1(b"%s %d\0" % (kind.encode(), len(data)) + data).hexdigest()


def blob_id(data: bytes) -> str:
    """The sha-1 git gives a blob holding `data`: the one blob-sha function of kbsync."""
    return object_id("blob", data)


LOOSE_LEVEL = 1  # git's default core.looseCompression: best speed


def loose(kind: str, data: bytes) -> bytes:
    """The zlib-compressed bytes git stores in objects/xx/yyyy… for this object."""
    return zlib.compress(b"%s %d\0" % (kind.encode(), len(data)) + data, LOOSE_LEVEL)


def _order(item: tuple[str, tuple[str, str]]) -> bytes:
    """git's tree order: by name bytes, a folder's name compared as if it ended in `/`."""
    name, (mode, _sha) = item
    return name.encode("utf-8", "surrogateescape") + (b"/" if mode == TREE_MODE else b"")


def tree_bytes(entries: Mapping[str, tuple[str, str]]) -> bytes:
    """A tree object's content from its entries."""
    return b"".join(b"%s %s\0%s" % (mode.encode(), name.encode("utf-8", "surrogateescape"), bytes.fromhex(sha))
                    for name, (mode, sha) in sorted(entries.items(), key=_order))


def parse_tree(data: bytes) -> Entries:
    """A tree object's entries from its content."""
    entries: Entries = {}
    pos = 0
    while pos < len(data):
        space = data.index(b" ", pos)
        nul = data.index(b"\0", space)
        name = data[space + 1:nul].decode("utf-8", "surrogateescape")
        entries[name] = (data[pos:space].decode(), data[nul + 1:nul + 21].hex())
        pos = nul + 21
    return entries


def parents_of(relpath: str) -> list[str]:
    """The folders holding `relpath`, outermost first: `a/b/c.md` -> ["", "a", "a/b"]."""
    parts = relpath.split("/")[:-1]
    return [""] + ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]


def dirs_to_read(relpaths: Iterable[str]) -> list[str]:
    """Every folder `rewrite` needs from the base tree to change `relpaths`."""
    return sorted({""} | {d for p in relpaths for d in parents_of(p)})


@dataclass(frozen=True)
class Rewritten:
    tree: str  # the new root tree's sha
    objects: list[tuple[str, bytes]]  # (sha, tree content) of every tree that changed, to store


def rewrite(base: Mapping[str, Entries], changes: Sequence[Change]) -> Rewritten:
    """Apply (relpath, mode, sha-or-None) changes to the base trees read for `dirs_to_read`.

    `base` maps each folder (`""` the root) to its entries; a folder missing
    from it is new. A path whose sha is None is removed; a folder left empty is
    removed from its parent, as git never stores an empty tree below the root.
    """
    trees: dict[str, Entries] = {d: dict(base.get(d, {})) for d in dirs_to_read(p for p, _m, _s in changes)}
    for relpath, mode, sha in changes:
        folder, _, name = relpath.rpartition("/")
        if sha is None:
            trees[folder].pop(name, None)
        else:
            trees[folder][name] = (mode, sha)
    objects: list[tuple[str, bytes]] = []
    root = ""
    for folder in sorted(trees, key=lambda d: -(d.count("/") + bool(d))):  # innermost first
        entries = trees[folder]
        parent, _, name = folder.rpartition("/")
        if not entries and folder:
            trees[parent].pop(name, None)
            continue
        data = tree_bytes(entries)
        sha = object_id("tree", data)
        objects.append((sha, data))
        if folder:
            trees[parent][name] = (TREE_MODE, sha)
        else:
            root = sha
    return Rewritten(root, objects)

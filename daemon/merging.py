"""Bring a remote head into the local workspace: plan (kbsync.integrate), write the work tree, commit.

The same steps for both transports. The work tree is written first (atomic
writes, conflict copies, a line in logs/errors.md), then the commit lands with
a compare-and-swap on HEAD; a crash in between leaves changed files that the
next commit picks up, never a HEAD whose files are missing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping

from kbsync import conflicts, fsio, gitrepo, initws, integrate, protocol
from kbsync.errors import LockedError
from kbsync.integrate import Versions
from kbsync.remotes.base import RemoteHead
from kbsync.workspace import Workspace


@dataclass
class Merged:
    head: str | None  # the local head after integrating
    pulled: list[str] = field(default_factory=list)  # paths the remote's changes rewrote locally
    copies: list[str] = field(default_factory=list)  # conflict copies saved


def skeleton() -> dict[str, bytes]:
    """What `kbsync init` writes into a new workspace: these yield to a remote's versions."""
    files = {rel: text.encode("utf-8") for rel, text in initws.FILES.items()}
    files.update({f"{d}/{initws.KEEP}": b"" for d in initws.DIRS})
    return files


def integrate_remote(ws: Workspace, head: str | None, remote: RemoteHead, base_tree: str | None) -> Merged:
    """Integrate `remote` into the local branch at `head`; the new local head and what changed."""
    root = ws.root
    if remote.parent and head and gitrepo.is_ancestor(root, remote.parent, head):
        return Merged(head)
    local_tree = gitrepo.tree_of(root, head)
    if remote.parent is None and remote.tree in (base_tree, local_tree):
        return Merged(head)  # nothing new on the remote, or nothing to integrate
    diff = gitrepo.diff_trees(root, local_tree, remote.tree)
    changes = versions(ws, base_tree, local_tree, remote.tree, [c.relpath for c in diff])
    plan = integrate.plan(changes, skeleton())
    writes = plan.local_writes(changes)
    apply_writes(ws, writes, {p: v.local for p, v in changes.items()})
    copies = [conflicts.save_conflict_copy(ws, c.relpath, c.local, other_desc=f"this machine's version, {c.what}")
              for c in plan.conflicts]
    modes = {c.relpath: (c.new or c.old or ("100644", ""))[0] for c in diff}
    tree = _merged_tree(ws, local_tree, modes, writes, copies)
    new = _new_head(ws, head, local_tree, remote, tree, len(writes), len(copies))
    if new is not None and new != head:
        gitrepo.move_head(root, new, head, gitrepo.diff_trees(root, local_tree, tree), "sync")
    return Merged(new, sorted(writes), copies)


def versions(ws: Workspace, base: str | None, local: str, remote: str, paths: list[str]) -> dict[str, Versions]:
    """Base, local and remote bytes of each of `paths` (those where the local and remote trees differ)."""
    specs = [f"{tree}:{p}" for p in paths for tree in (base or gitrepo.EMPTY_TREE, local, remote)]
    blobs = gitrepo.read_blobs(ws.root, specs)
    return {p: Versions(*blobs[3 * i:3 * i + 3]) for i, p in enumerate(paths)}


def _current(ws: Workspace, relpath: str) -> bytes | None:
    try:
        return ws.path(relpath).read_bytes()
    except FileNotFoundError:
        return None


def apply_writes(ws: Workspace, writes: Mapping[str, bytes | None], committed: Mapping[str, bytes | None]) -> None:
    """Write the integrated bytes into the work tree; edits not yet committed are kept, never overwritten."""
    for relpath in writes:
        if fsio.lock_held(ws.path(relpath)):
            raise LockedError("being written (its lock is held); nothing was changed, sync again shortly", path=relpath)
    for relpath, data in writes.items():
        now = _current(ws, relpath)
        if now != committed[relpath] and now is not None:
            if integrate.is_append_only(relpath):
                data = integrate.union(committed[relpath], now, data)
            else:
                conflicts.save_conflict_copy(ws, relpath, now, other_desc="uncommitted edit on this machine")
        if data is None:
            _remove(ws, relpath)
        else:
            fsio.atomic_write(ws.path(relpath), data)


def _remove(ws: Workspace, relpath: str) -> None:
    try:
        os.unlink(ws.path(relpath))
    except FileNotFoundError:
        pass


def _merged_tree(ws: Workspace, local_tree: str, modes: Mapping[str, str], writes: Mapping[str, bytes | None],
                 copies: list[str]) -> str:
    """The local tree with the integrated files, the conflict copies and the error log as now on disk."""
    touched = sorted(set(writes) | set(copies) | ({protocol.ERRORS_LOG} if copies else set()))
    now = {relpath: _current(ws, relpath) for relpath in touched}
    shas = iter(gitrepo.store_objects(ws.root, [("blob", data) for data in now.values() if data is not None]))
    entries = [(relpath, modes.get(relpath, "100644"), None if data is None else next(shas))
               for relpath, data in now.items()]
    return gitrepo.build_tree(ws.root, local_tree, entries)


def _new_head(ws: Workspace, head: str | None, local_tree: str, remote: RemoteHead, tree: str,
              pulled: int, copies: int) -> str | None:
    """Fast-forward to the remote when that is the result, keep `head` when nothing changed, else commit."""
    root = ws.root
    if remote.parent and tree == remote.tree and (head is None or gitrepo.is_ancestor(root, head, remote.parent)):
        return remote.parent
    if tree == local_tree and remote.parent is None:
        return head
    parents = ([head] if head else []) + ([remote.parent] if remote.parent else [])
    note = f", {copies} conflict cop{'y' if copies == 1 else 'ies'}" if copies else ""
    message = f"sync: integrate remote {remote.commit[:7]} ({pulled} file{'' if pulled == 1 else 's'}{note})\n"
    cfg = ws.config.daemon
    return gitrepo.commit_tree(root, tree, parents, message, (cfg.author_name, cfg.author_email))

"""Bring a remote head into the local workspace: plan (kbsync.sync.plan), write the work tree, commit.

The same steps for both transports. The work tree is written first: conflict
copies (with a line in logs/errors.md) before the paths they stand beside are
overwritten, then the integrated files (atomic writes); then the commit lands
with a compare-and-swap on HEAD. A crash anywhere in between leaves changed
files that the next commit picks up, never a HEAD whose files are missing, and
never a local version that exists only in git's history.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Collection, Mapping

from kbsync.core import protocol
from kbsync.errors import LockedError
from kbsync.git import objects, repo
from kbsync.store import conflicts, fsio, initws, pathgate
from kbsync.store.eventlog import log_error
from kbsync.store.machine import machine_id
from kbsync.store.workspace import Workspace
from kbsync.sync import limits, plan
from kbsync.sync.plan import Versions
from kbsync.sync.transports.base import RemoteHead


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
    if remote.parent and head and repo.is_ancestor(root, remote.parent, head):
        return Merged(head)
    local_tree = repo.tree_of(root, head)
    if remote.parent is None and remote.tree in (base_tree, local_tree):
        return Merged(head)  # nothing new on the remote, or nothing to integrate
    diff = repo.diff_trees(root, local_tree, remote.tree)
    remote_files = repo.list_tree(root, remote.tree)
    refuse_unsafe(ws, remote, remote_files, diff)
    base: dict[str, repo.Side] = {}
    if base_tree is not None:  # a path the remote did not change since the base keeps the local side: skip it
        base = {c.relpath: c.old for c in repo.diff_trees(root, base_tree, remote.tree)}
        diff = [c for c in diff if c.relpath in base]
    refuse_large(ws, remote, diff)
    changes = versions(ws, {c.relpath: (base.get(c.relpath), c.old, c.new) for c in diff})
    planned = plan.plan(changes, skeleton())
    writes = planned.local_writes(changes)
    refuse_locked(ws, writes)
    # A copy's name is none the remote's tree or a pending write holds: the remote may ship files named like
    # this machine's copies, and those are its ordinary files, written where they say.
    taken = set(remote_files) | set(repo.list_tree(root, local_tree)) | set(writes)
    # The copies first: a crash before the path is overwritten then leaves both versions on disk.
    copies = [conflicts.save_conflict_copy(ws, c.relpath, c.local, other_desc=f"this machine's version, {c.what}",
                                           taken=taken) for c in planned.conflicts]
    # Copies of edits not yet committed stay out of this commit, as those edits do: the next commit checks them.
    pending = apply_writes(ws, writes, {p: v.local for p, v in changes.items()}, taken | set(copies))
    lookalikes = note_lookalikes(ws, remote, [c.relpath for c in diff if c.new and not c.old])
    tree, entries = _merged_tree(ws, local_tree, {c.relpath: c for c in diff}, writes, copies, bool(lookalikes))
    new = _new_head(ws, head, local_tree, remote, tree, len(writes), len(copies))
    if new is not None and new != head:
        repo.update_head(root, new, head, "kbsync: sync", entries)
    return Merged(new, sorted(writes), copies + pending)


def refuse_unsafe(ws: Workspace, remote: RemoteHead, files: Mapping[str, tuple[str, str]],
                  diff: list[repo.TreeChange]) -> None:
    """RemoteError before anything is written if the remote's tree (its `files`) holds an entry the path gate
    refuses, or one of the paths it changes passes through a symlink on this machine (kbsync.store.pathgate)."""
    entries = [(p, mode) for p, (mode, _sha) in files.items()]
    pathgate.check_remote_tree(remote.commit, entries, ws.root, written=[c.relpath for c in diff if c.new],
                               removed=[c.relpath for c in diff if not c.new])


def refuse_large(ws: Workspace, remote: RemoteHead, diff: list[repo.TreeChange]) -> None:
    """TooLargeError before any content is read if a file the remote changed is over its size limit: the sizes
    come from the objects' headers (kbsync.sync.limits)."""
    shas = sorted({c.new[1] for c in diff if c.new})
    sizes = repo.object_sizes(ws.root, shas)
    limits.check_sizes(ws.config.sync, remote.commit,
                       [(c.relpath, size) for c in diff if c.new and (size := sizes.get(c.new[1])) is not None])


def versions(ws: Workspace, sides: Mapping[str, tuple[repo.Side, repo.Side, repo.Side]]) -> dict[str, Versions]:
    """Base, local and remote bytes of each path, from the (mode, blob) of each side (None: absent)."""
    shas = sorted({side[1] for three in sides.values() for side in three if side})
    blobs = dict(zip(shas, repo.read_blobs(ws.root, shas)))
    return {p: Versions(*(blobs[side[1]] if side else None for side in three)) for p, three in sides.items()}


def _current(ws: Workspace, relpath: str) -> bytes | None:
    try:
        return ws.path(relpath).read_bytes()
    except FileNotFoundError:
        return None


def refuse_locked(ws: Workspace, writes: Mapping[str, bytes | None]) -> None:
    """LockedError, before anything is written, if a path the integration writes is being written."""
    for relpath in writes:
        if fsio.lock_held(ws.path(relpath)):
            raise LockedError("being written (its lock is held); nothing was changed, sync again shortly", path=relpath)


def apply_writes(ws: Workspace, writes: Mapping[str, bytes | None], committed: Mapping[str, bytes | None],
                 taken: Collection[str]) -> list[str]:
    """Write the integrated bytes into the work tree; edits not yet committed are kept, never overwritten: merged
    with the integrated bytes by the same rules (the committed version as their base), else saved as a copy
    (named none of `taken`, nor of `writes`); the copies saved."""
    final: dict[str, bytes | None] = {}
    copies: list[str] = []
    for relpath in sorted(writes, key=lambda p: p == protocol.ERRORS_LOG):  # the log last: a copy adds a line to it
        data, now = writes[relpath], _current(ws, relpath)
        if now != committed[relpath] and now is not None:
            data, found = plan.integrate_path(relpath, Versions(committed[relpath], now, data))
            copies += [conflicts.save_conflict_copy(ws, relpath, c.local, taken={*taken, *writes, *copies},
                                                    other_desc=f"uncommitted edit on this machine, {c.what}")
                       for c in found]
        final[relpath] = data
    fsio.atomic_write_all({ws.path(relpath): data for relpath, data in final.items() if data is not None})
    for relpath, data in final.items():
        if data is None:
            _remove(ws, relpath)
    return copies


def _remove(ws: Workspace, relpath: str) -> None:
    try:
        os.unlink(ws.path(relpath))
    except FileNotFoundError:
        pass


def note_lookalikes(ws: Workspace, remote: RemoteHead, added: list[str]) -> list[str]:
    """The paths the remote added that are named like conflict copies of this machine's (its id): written as the
    remote's ordinary files, and said once in logs/errors.md, so that no one takes them for this machine's."""
    mine = machine_id(ws)
    found = sorted(p for p in added if (name := protocol.parse_conflict_name(p)) is not None
                   and (name.machine or "") == mine)
    if found:
        more = f" and {len(found) - 1} more" if len(found) > 1 else ""
        log_error(ws, f"the remote commit {remote.commit[:12]} holds {found[0]}{more}, named like conflict copies of "
                      f"this machine ({mine}) that it did not save: they are the remote's files, not this "
                      "machine's versions")
    return found


def _merged_tree(ws: Workspace, local_tree: str, diff: Mapping[str, repo.TreeChange],
                 writes: Mapping[str, bytes | None], copies: list[str],
                 logged: bool = False) -> tuple[str, list[objects.Change]]:
    """The local tree with the integrated files, the conflict copies and the error log as now on disk (when a copy
    was made or a line `logged`); and those paths as (relpath, mode, blob sha or None) entries: what changed
    from `local_tree`."""
    touched = sorted(set(writes) | set(copies) | ({protocol.ERRORS_LOG} if copies or logged else set()))
    present = {relpath: data for relpath in touched if (data := _current(ws, relpath)) is not None}
    held = {side[1] for c in diff.values() for side in (c.old, c.new) if side}  # both trees' blobs: in the repository
    shas = dict(zip(present, repo.store_objects(ws.root, [("blob", data) for data in present.values()], held)))
    entries = [(relpath, _mode(diff.get(relpath)), shas.get(relpath)) for relpath in touched]
    return repo.build_tree(ws.root, local_tree, entries), entries


def _mode(change: repo.TreeChange | None) -> str:
    side = change and (change.new or change.old)
    return side[0] if side else "100644"


def _new_head(ws: Workspace, head: str | None, local_tree: str, remote: RemoteHead, tree: str,
              pulled: int, copies: int) -> str | None:
    """Fast-forward to the remote when that is the result, keep `head` when nothing changed, else commit."""
    root = ws.root
    if remote.parent and tree == remote.tree and (head is None or repo.is_ancestor(root, head, remote.parent)):
        return remote.parent
    if tree == local_tree and remote.parent is None:
        return head
    parents = ([head] if head else []) + ([remote.parent] if remote.parent else [])
    note = f", {copies} conflict cop{'y' if copies == 1 else 'ies'}" if copies else ""
    message = f"sync: integrate remote {remote.commit[:7]} ({pulled} file{'' if pulled == 1 else 's'}{note})\n"
    cfg = ws.config.daemon
    return repo.commit_tree(root, tree, parents, message, (cfg.author_name, cfg.author_email))

"""Conflicts to settle: list them, show a difference, resolve one through the normal write path.

A conflict is a conflict copy (`<stem>.conflict-<UTC>-<machine id>.md`, the version
that lost a race, beside the file that kept the other) or a file marked
`status: conflict` (a session whose frontmatter a repair had to rebuild).
"mine" is the copy's version, "theirs" the file's as it stands. Resolving writes
the file under its lock with a fingerprint check and a backup, keeps a backup of
the copy, removes it and commits the two paths. See docs/sync.md.
"""

from __future__ import annotations

import difflib
import os
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Literal, cast

from kbsync.errors import InputError, KbsyncError, NothingFoundError, UsageError

if TYPE_CHECKING:
    from kbsync.core.clashes import Clash
    from kbsync.core.worddiff import Row
    from kbsync.results import Conflict
    from kbsync.results import Resolved as ResolvedShape
    from kbsync.store.workspace import Workspace

Keep = Literal["mine", "theirs", "both"]
KEEPS: tuple[Keep, ...] = ("mine", "theirs", "both")


@dataclass(frozen=True)
class Version:
    path: str
    time: str | None  # ISO 8601
    machine: str | None  # the machine id that made it, where known


@dataclass(frozen=True)
class ConflictItem:
    path: str  # what to settle: the copy, or the file marked status: conflict
    original: str  # the file it belongs to
    kind: str  # "copy" or "status"
    mine: Version  # the copy (for a status conflict: the file itself)
    theirs: Version | None  # the file as it stands (None for a status conflict: there is no other version)

    def as_dict(self) -> Conflict:
        return cast("Conflict", asdict(self))


@dataclass(frozen=True)
class ConflictView:
    item: ConflictItem
    mine: str  # the copy's text (for a status conflict: the file's)
    theirs: str | None  # the file's text as it stands; None for a status conflict, or when the file is gone
    diff: str  # unified, from theirs to mine; "" for a status conflict


@dataclass(frozen=True)
class Resolved:
    path: str  # the file written
    removed: str | None  # the copy removed
    keep: str
    commit: str | None

    def as_dict(self) -> ResolvedShape:
        return cast("ResolvedShape", asdict(self))


# ---- listing --------------------------------------------------------------------------

def list_conflicts(ws: Workspace) -> list[ConflictItem]:
    """Every conflict copy and every file marked `status: conflict`, in path order."""
    from kbsync.core import protocol

    items, sessions = [], []
    for rel in ws.iter_files():
        if protocol.is_conflict_copy(rel):
            items.append(_copy_item(ws, rel))
        elif protocol.classify(rel) == "session":
            sessions.append(rel)
    items += [ConflictItem(rel, rel, "status", _version(ws, rel), None) for rel in marked_sessions(ws, sessions)]
    return sorted(items, key=lambda i: i.path)


def conflict_copies(ws: Workspace) -> list[str]:
    """The conflict copies waiting for a person (what `kbsync status` counts)."""
    return [item.path for item in list_conflicts(ws) if item.kind == "copy"]


def _copy_item(ws: Workspace, rel: str) -> ConflictItem:
    from kbsync.core import protocol

    name = protocol.parse_conflict_name(rel)
    assert name is not None
    s = name.stamp
    made = f"{s[0:4]}-{s[4:6]}-{s[6:8]}T{s[9:11]}:{s[11:13]}:{s[13:15]}Z"
    theirs = _version(ws, name.original) if ws.path(name.original).exists() else Version(name.original, None, None)
    return ConflictItem(rel, name.original, "copy", Version(rel, made, name.machine), theirs)


def _version(ws: Workspace, rel: str) -> Version:
    """The file's time and machine: those of the last commit that touched it while the file is as committed, else
    its modification time on this machine."""
    from kbsync.git import history, repo
    from kbsync.store.machine import machine_id

    change = history.last_change(ws.root, rel) if repo.is_repo(ws.root) else None
    if change is not None and rel not in set(repo.changed_paths(ws.root)):
        return Version(rel, change[0], change[1])
    mtime = ws.path(rel).stat().st_mtime
    return Version(rel, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(mtime)), machine_id(ws))


def marked_sessions(ws: Workspace, rels: Iterable[str], between: Callable[[], None] | None = None) -> list[str]:
    """Of the sessions `rels`, those whose frontmatter says `status: conflict`. A session is read again only when
    its stat changed since this process last looked (the conflicts and status pages list every session); when
    many are new to it (a first look), one `git grep` over sessions/ narrows the reading to the files holding such
    a line. `between`, if given, is called every STEP_SESSIONS sessions (a warm-up in the background)."""
    from kbsync.core import protocol
    from kbsync.git import history, repo

    out: list[str] = []
    unseen: list[tuple[str, int]] = []  # (path, stamp)
    root = str(ws.root)
    looked = _looked.setdefault(root, {})
    for n, rel in enumerate(rels, 1):
        if between is not None and not n % STEP_SESSIONS:
            between()
        try:
            st = os.lstat(f"{root}{os.sep}{rel}")
        except OSError:
            continue
        held, stamp = looked.get(rel), _stamp(st)
        if held is not None and held[0] == stamp:
            out += [rel] if held[1] else []
        else:
            unseen.append((rel, stamp))
    if len(unseen) > GREP_OVER:
        unseen = _from_index(ws, unseen, out, looked, between)
    grepped: set[str] | None = None
    if len(unseen) > GREP_OVER and repo.is_repo(ws.root):
        try:
            grepped = set(history.files_matching(ws.root, CONFLICT_STATUS, protocol.SESSIONS_DIR))
        except KbsyncError:
            grepped = None
    for rel, stamp in unseen:
        marked = (grepped is None or rel in grepped) and _marked(ws, rel)
        looked[rel] = (stamp, marked)
        out += [rel] if marked else []
    return sorted(out)


# a workspace's root -> a session's path in it -> (its stat when read, as one number: _stamp; marked then)
_looked: dict[str, dict[str, tuple[int, bool]]] = {}
GREP_OVER = 64  # sessions unseen (or changed) since this process last looked, past which one `git grep` finds them
STEP_SESSIONS = 1024  # sessions looked at between two calls of `between` (a few milliseconds)
CONFLICT_STATUS = r"""^status:[[:space:]]*["']?conflict["']?[[:space:]]*$"""
_BITS = 64
_MASK = (1 << _BITS) - 1


def _stamp(st: os.stat_result) -> int:
    """A file's inode, size, modification and change times (each in 64 bits) as one integer: one object a
    session, where a tuple of four took five (12,000 sessions: about 2 MB less)."""
    return ((_size_and_mtime(st.st_size, st.st_mtime_ns) | st.st_ino << 2 * _BITS) << _BITS) | st.st_ctime_ns & _MASK


def _size_and_mtime(size: int, mtime_ns: int) -> int:
    """The part of a stamp that the size and the modification time make."""
    return size << _BITS | mtime_ns & _MASK


def _from_index(ws: Workspace, unseen: list[tuple[str, int]], out: list[str], looked: dict[str, tuple[int, bool]],
                between: Callable[[], None] | None) -> list[tuple[str, int]]:
    """Of the sessions `unseen` (rel, stamp), those the search index does not hold as they are now (same
    modification time and size, a frontmatter it could read); the status of the others is the index's (those
    marked are added to `out`, and all of them to `looked`)."""
    from kbsync.retrieval import db
    from kbsync.retrieval.index import session_statuses

    try:
        indexed = session_statuses(ws)
    except (KbsyncError, OSError, db.Error):
        return unseen
    left = []
    for n, (rel, stamp) in enumerate(unseen, 1):
        if between is not None and not n % STEP_SESSIONS:
            between()
        got = indexed.get(rel)
        if got is None or _size_and_mtime(got[2], got[1]) != stamp >> _BITS & (1 << 2 * _BITS) - 1:
            left.append((rel, stamp))
            continue
        marked = got[3] == "conflict"
        looked[rel] = (stamp, marked)
        out += [rel] if marked else []
    return left


def _marked(ws: Workspace, rel: str) -> bool:
    from kbsync.git.commit import session_status

    try:
        text = ws.read_text(rel)
        # a file marked `status: conflict` holds the word: one look at the text spares parsing its frontmatter
        return "conflict" in text and session_status(text) == "conflict"
    except Exception:  # an unreadable file is validate's to report, not a conflict
        return False


def named(ws: Workspace, path: str) -> str:
    """A conflict's path as a client names it, from the workspace root (the HTTP API's `{path}`), made absolute for
    the functions here. UsageError saying why when the path gate (kbsync.store.pathgate) refuses it: absolute,
    climbing out with `..`, in .git/ or .kbsync/, through or onto a symlink."""
    from kbsync.store import pathgate

    why = pathgate.refusal(ws.root, path)
    if why:
        raise UsageError(f"the path {path!r} {why}; name a conflict by its path from the workspace root, as the "
                         "list of conflicts gives it")
    return str(ws.path(path))


def find(ws: Workspace, path: str) -> ConflictItem:
    """The conflict `path` names: a copy, a file marked `status: conflict`, or a file with exactly one copy."""
    rel = ws.relpath(path)
    items = list_conflicts(ws)
    exact = [i for i in items if i.path == rel]
    if exact:
        return exact[0]
    beside = [i for i in items if i.original == rel]
    if len(beside) > 1:
        raise UsageError(f"{len(beside)} conflict copies stand beside it ({', '.join(i.path for i in beside)}); "
                         "name one of them", path=rel)
    if not beside:
        raise NothingFoundError("no conflict here; see `kbsync conflicts`", path=rel)
    return beside[0]


# ---- diff -------------------------------------------------------------------------------

def conflict_diff(ws: Workspace, path: str) -> str:
    """A unified diff from the file's version (theirs) to the copy's (mine); "" when they are equal."""
    item = find(ws, path)
    if item.theirs is None:
        raise UsageError("marked `status: conflict` with no other version; look at it, then "
                         f"`kbsync conflicts resolve {item.path} --keep mine`", path=item.path)
    return _diff(ws, item)


def show(ws: Workspace, path: str) -> ConflictView:
    """One conflict with the text of both versions and the diff between them."""
    item = find(ws, path)
    mine = ws.read_text(item.path)
    if item.theirs is None:
        return ConflictView(item, mine, None, "")
    theirs = ws.read_text(item.original) if ws.path(item.original).exists() else None
    return ConflictView(item, mine, theirs, _diff(ws, item))


def _diff(ws: Workspace, item: ConflictItem) -> str:
    old, new = _text(ws, item.original), _text(ws, item.path)
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        f"a/{item.original} (theirs)", f"b/{item.path} (mine)"))


def _text(ws: Workspace, rel: str) -> str:
    return ws.read_text(rel) if ws.path(rel).exists() else ""


@dataclass(frozen=True)
class SideBySide:
    view: ConflictView
    rows: list[Row]  # both versions line by line, theirs on the left, mine on the right, changed words marked
    keeps: tuple[Keep, ...]  # the choices that apply: mine alone for a status conflict, both only for entry files
    clashes: list[Clash]  # the board's and memory files' entries, a session's sections: each side by side
    start: str = ""  # what an edit of the whole file by hand starts from (what keeping mine writes); "" where
    # the file is edited entry by entry (the board, the memory files) or has no other version


def side_by_side(ws: Workspace, path: str) -> SideBySide:
    """One conflict with both versions aligned line by line and the choices that can settle it."""
    from kbsync.core import facts
    from kbsync.core.clashes import clashes
    from kbsync.core.worddiff import line_diff

    view = show(ws, path)
    if view.item.theirs is None:
        return SideBySide(view, [], ("mine",), [])
    from kbsync.core import conflictmerge, protocol

    original = view.item.original
    keeps: tuple[Keep, ...] = KEEPS if facts.is_entry_file(original) else ("mine", "theirs")
    whole = not (facts.is_entry_file(original) or original == protocol.BOARD_MD)
    return SideBySide(view, line_diff(view.theirs or "", view.mine), keeps,
                      clashes(original, view.theirs or "", view.mine),
                      conflictmerge.kept(original, view.theirs or "", view.mine, "mine") if whole else "")


def read_settled(ws: Workspace, path: str) -> str:
    """The text of a file as it is on disk now (after settling it), read as every workspace file is read."""
    return ws.read_text(ws.relpath(path))


# ---- resolve ----------------------------------------------------------------------------

def resolve(ws: Workspace, path: str, keep: str, picks: dict[str, str] | None = None,
            edits: dict[str, str] | None = None, text: str = "") -> Resolved:
    """Settle one conflict: write the kept result through the file's lock, remove the copy, commit both.
    `keep` "picked" takes, for each entry (board) or fact (memory files) that `picks` names, the copy's version
    ("mine"), the person's text in `edits` ("edited") or the file's ("theirs", as for the others); "edited"
    writes `text`, the person's own for the whole file (a session, another file). InputError saying what to
    change when an edit is not valid: nothing is written then."""
    from kbsync.core import clashes, conflictmerge
    from kbsync.store import fsio

    if keep not in (*KEEPS, "picked", "edited"):
        raise UsageError(f"--keep {keep!r}; use mine, theirs or both")
    item = find(ws, path)
    if item.theirs is None:
        return _settle_status(ws, item, keep)
    copy = ws.read_text(item.path)
    theirs = _text(ws, item.original)
    try:
        result = (clashes.picked(item.original, theirs, copy, picks or {}, edits) if keep == "picked"
                  else clashes.by_hand(item.original, text) if keep == "edited"
                  else conflictmerge.kept(item.original, theirs, copy, keep))
    except ValueError as exc:
        raise InputError(str(exc), path=item.path) from exc
    daemon = ws.config.daemon
    with fsio.locked(ws.path(item.path), ttl_s=daemon.lock_ttl_s, wait_s=daemon.lock_wait_s):
        _write(ws, item.original, lambda _old: result)
        _remove_copy(ws, item.path, copy)  # under its lock, so no timed commit takes the removal on its own
        sha = _commit(ws, [item.original, item.path], item, keep, held=frozenset({item.path}))
    return Resolved(item.original, item.path, keep, sha)


def _settle_status(ws: Workspace, item: ConflictItem, keep: str) -> Resolved:
    """A file marked `status: conflict` with no other version: --keep mine marks it `open` again."""
    from kbsync.core import frontmatter

    if keep != "mine":
        raise InputError("marked `status: conflict` with no other version; only --keep mine applies (the file as "
                         "it is, marked open again)", path=item.path)
    _write(ws, item.path, lambda text: frontmatter.set_field(text, "status", "open"))
    return Resolved(item.path, None, keep, _commit(ws, [item.path], item, keep))


def _write(ws: Workspace, rel: str, edit: Callable[[str], str]) -> None:
    from kbsync.store.guardededit import edit_file

    edit_file(ws, rel, edit)


def _remove_copy(ws: Workspace, rel: str, text: str) -> None:
    """The copy goes, its bytes kept under .kbsync/backup/ first."""
    from kbsync.store import fsio

    fsio.backup(ws.backup_dir, rel, text.encode("utf-8"))
    os.unlink(ws.path(rel))


def _commit(ws: Workspace, relpaths: list[str], item: ConflictItem, keep: str,
            held: frozenset[str] = frozenset()) -> str | None:
    from kbsync.git import repo
    from kbsync.git.commit import commit_paths

    if not repo.is_repo(ws.root):
        return None
    done = commit_paths(ws, relpaths, f"conflict: {item.original} settled, kept {keep} ({item.path})\n", held)
    if done.skipped:
        why = "; ".join(f"{p}: {w}" for p, w in sorted(done.skipped.items()))
        raise KbsyncError(f"settled on disk but not committed ({why}); fix that and run `kbsync commit`")
    return done.sha

"""`kbsync status`: the truth about a workspace, with or without a running daemon.

What the report says is read from where it is true: the last commit is git's HEAD (whoever made it), what
waits is found in the work tree itself (what the next commit would leave out and why, sessions marked
`status: conflict`, conflict copies, temp files that killed writers left), and only what the daemon alone
knows (whether it runs, its queue, its last event, repair and sync) comes from `.kbsync/status.json`, which
the daemon rewrites atomically as it works (one typed record, kbsync.store.daemonstatus). Whether the daemon
still runs is decided from the workspace lock (its pid alive on this host), never from the file alone.

Each thing that waits is a `Waiting` item (path, reason, and whether a person or time settles it), made by
one of the `CHECKS`; a new kind of waiting is one more check in that tuple.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from kbsync.core import protocol
from kbsync.errors import EXIT_OK, EXIT_PROBLEMS, KbsyncError
from kbsync.git import commit, history, inprogress, repo
from kbsync.store import daemonstatus, fsio, listings
from kbsync.store.daemonstatus import DaemonStatus
from kbsync.store.machine import machine_id
from kbsync.store.unreadable import unreadable_files
from kbsync.store.workspace import Workspace
from kbsync.sync import state

if TYPE_CHECKING:
    from kbsync.results import SettleBy, StatusReport, WaitingItem

log = logging.getLogger(__name__)

def lock_target(ws: Workspace) -> Path:
    """The path whose `.lock` is the workspace lock (`.kbsync/workspace.lock`)."""
    return ws.root / protocol.WORKSPACE_LOCK.removesuffix(protocol.LOCK_SUFFIX)


def daemon_pid(ws: Workspace) -> int | None:
    """The pid of the daemon holding the workspace lock, if one is running."""
    target = lock_target(ws)
    if not fsio.lock_held(target):
        return None
    try:
        return int(json.loads(fsio.lock_path(target).read_text(encoding="utf-8"))["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


LEFTOVER_AGE_S = 60.0  # a temp file this old is no write in progress: its writer was stopped
WAITS_FOR_TIME = ("locked", "changing")  # a file left out for these goes in at a later commit by itself


@dataclass(frozen=True)
class Waiting:
    """One thing that waits: `path`, `reason` (one line), and whether a `person` or `time` settles it."""

    path: str
    reason: str
    settle_by: SettleBy = "person"
    kind: str = "other"  # left-out, conflict-status, conflict-copy, temp-file, daemon, ... (groups the lines)

    def as_dict(self) -> WaitingItem:
        return {"path": self.path, "reason": self.reason, "settle_by": self.settle_by, "kind": self.kind}


WALKED = (".md", fsio.TEMP_SUFFIX)  # the files a report's checks look at


@dataclass
class Scene:
    """What every check looks at, gathered once: the files that differ from HEAD, one walk of the workspace
    (kbsync.store.listings)."""

    ws: Workspace
    now: float
    changed: list[str]
    walked: list[str]  # the .md and temp files, sorted
    saved: DaemonStatus = field(default_factory=DaemonStatus)  # the daemon's status file, while it runs
    folders: list[listings.Folder] = field(default_factory=list)  # the walk's folders, each with its listing


Check = Callable[[Scene], list[Waiting]]


def left_out(scene: Scene) -> list[Waiting]:
    """What a commit made now would leave out of the files that differ from HEAD, and why."""
    _staged, skipped = commit.select(scene.ws, scene.changed, scene.now)
    return [Waiting(rel, why, "time" if why in WAITS_FOR_TIME else "person", "left-out")
            for rel, why in sorted(skipped.items())]


def _sessions_in(folder: listings.Folder) -> tuple[str, ...]:
    """The sessions a folder's listing holds (kept with it): conflict copies and symlinks aside. Their paths are
    those of the report's files (the same strings, kept once)."""
    links = set(folder.of_kind(listings.LINK))
    return tuple(rel for rel in folder.named(WALKED) if rel.endswith(".md") and rel[len(folder.rel):] not in links
                 and protocol.classify(rel) == "session" and not protocol.is_conflict_copy(rel))


def _sessions(folders: list[listings.Folder]) -> list[str]:
    return [rel for folder in folders for rel in folder.kept(_sessions_in)]


def conflict_status(scene: Scene) -> list[Waiting]:
    """Sessions whose frontmatter says `status: conflict` (rebuilt from their name by a repair, or saved so)."""
    from kbsync.app.conflicts import marked_sessions

    return [Waiting(rel, "status: conflict; check its fields and text, then set its status to open or closed",
                    kind="conflict-status") for rel in marked_sessions(scene.ws, _sessions(scene.folders))]


def conflict_copies(scene: Scene) -> list[Waiting]:
    return [Waiting(rel, "conflict copy; compare it with its file, keep what is right, delete the copy",
                    kind="conflict-copy")
            for rel in scene.walked if ".conflict-" in rel and protocol.is_conflict_copy(rel)]


def temp_files(scene: Scene) -> list[Waiting]:
    """Temp files that interrupted writes left behind (kbsync never deletes them: see docs/protocol.md)."""
    limit = scene.now - LEFTOVER_AGE_S
    out = []
    for rel in scene.walked:
        try:
            old = rel.endswith(fsio.TEMP_SUFFIX) and scene.ws.path(rel).stat().st_mtime < limit
        except FileNotFoundError:
            continue  # the write it belonged to finished meanwhile
        if old:
            out.append(Waiting(rel, "temp file an interrupted write left; look at it, then delete it by hand",
                               kind="temp-file"))
    return out


def daemon_findings(scene: Scene) -> list[Waiting]:
    """What the running daemon found wrong in files that git holds as they are (a file pulled in invalid)."""
    skipped = scene.saved.skipped
    changed = set(scene.changed)
    return [Waiting(rel, why, kind="daemon") for rel, why in sorted(skipped.items())
            if rel not in changed and not why.startswith(WAITS_FOR_TIME) and scene.ws.path(rel).exists()]


def git_operation(scene: Scene) -> list[Waiting]:
    """What git is in the middle of (a rebase, a merge, ... or a detached HEAD): nothing is committed or
    synced until it ends (kbsync.git.inprogress), whether or not the daemon runs."""
    doing = inprogress.in_progress(scene.ws.root)
    return [Waiting(".git", f"waiting: {doing}; nothing is committed or synced until it ends",
                    kind="git-operation")] if doing else []


def unreadable(scene: Scene) -> list[Waiting]:
    """Entries that cannot be read as content (a FIFO, socket, device, dangling symlink, no permission): left
    out of every commit until fixed."""
    return [Waiting(rel, why, kind="unreadable") for rel, why in unreadable_files(scene.folders).items()]


def git_ignored(scene: Scene) -> list[Waiting]:
    """Protocol files git's ignore rules cover (a `.gitignore` line, perhaps a remote's). kbsync commits them all
    the same, but git itself would not: a person's `git add`, a clone's `git status`."""
    if not repo.is_repo(scene.ws.root):
        return []
    try:
        rules = repo.ignore_rules(scene.ws.root, [rel for rel in scene.walked if protocol.is_protocol_file(rel)])
    except KbsyncError:
        return []
    return [Waiting(rel, f"git would ignore it ({rule}); kbsync commits it all the same: remove that rule so git "
                         "agrees", kind="git-ignored") for rel, rule in sorted(rules.items())]


CHECKS: tuple[Check, ...] = (git_operation, left_out, conflict_status, conflict_copies, temp_files, daemon_findings,
                             unreadable, git_ignored)


def _once(waiting: list[Waiting]) -> list[Waiting]:
    """Each path once (a file several checks see, e.g. a FIFO that is also left out, keeps its first line)."""
    first: dict[str, Waiting] = {}
    for w in waiting:
        first.setdefault(w.path, w)
    return [w for w in waiting if first[w.path] is w]


@dataclass
class Report:
    workspace: str
    running: bool
    pid: int | None
    last_commit: dict[str, Any] | None
    last_sync: dict[str, Any] | None
    waiting: list[Waiting]
    uncommitted: int
    pending: list[str] = field(default_factory=list)
    daemon: dict[str, Any] = field(default_factory=dict)  # the rest of what only the daemon knows
    machine: str = "unknown"  # this machine's id, which names its conflict copies
    flagged: list[dict[str, Any]] = field(default_factory=list)  # indexed records carrying an embedded instruction
    semantic: dict[str, Any] | None = None  # the semantic index's progress (None: turned off)
    # records the learned classifier flags over the semantic index's vectors (None: leg off, the rules alone)
    classified: list[dict[str, Any]] | None = None

    @property
    def exit_code(self) -> int:
        return EXIT_PROBLEMS if self.waiting else EXIT_OK

    def of_kind(self, *kinds: str) -> list[Waiting]:
        return [w for w in self.waiting if w.kind in kinds]

    def as_dict(self) -> StatusReport:
        d = self.daemon
        return {"workspace": self.workspace, "machine": self.machine, "running": self.running, "pid": self.pid,
                "updated": d.get("updated"), "last_event": d.get("last_event"), "last_repair": d.get("last_repair"),
                "jobs": d.get("jobs", {}), "last_commit": self.last_commit, "last_sync": self.last_sync,
                "pending": self.pending, "uncommitted": self.uncommitted,
                "waiting": [w.as_dict() for w in self.waiting],
                "skipped": {w.path: w.reason for w in self.of_kind("left-out", "daemon")},
                "conflicts": [w.path for w in self.of_kind("conflict-copy")],
                "leftovers": [w.path for w in self.of_kind("temp-file")],
                "git_operation": next((w.reason for w in self.of_kind("git-operation")), None),
                "unreadable": {w.path: w.reason for w in self.waiting if w.reason.startswith("unreadable:")},
                "flagged": self.flagged, "semantic": self.semantic, "classified": self.classified}


def scene_of(ws: Workspace, saved: DaemonStatus, now: float | None = None) -> Scene:
    try:
        changed = [p for p in repo.changed_paths(ws.root) if not commit.is_runtime_path(p)] if repo.is_repo(ws.root) else []
    except KbsyncError:
        changed = []
    folders = listings.walk(ws.root)  # the folders unchanged since this process's last walk are not listed again
    walked = listings.files(folders, WALKED)
    return Scene(ws, time.time() if now is None else now, changed, walked, saved, folders)


def warm(ws: Workspace, between: Callable[[], None]) -> None:
    """Make ahead what a process's first report makes and the later ones reuse while nothing changed: every
    folder's listing, the walk's sorted files, each folder's sessions (a server does it when it starts, in
    the background: kbsync.app.catchup). `between` is called between steps of a few milliseconds."""
    folders = listings.walk(ws.root, between)
    for n, folder in enumerate(folders, 1):
        if not n % listings.STEP_FOLDERS:
            between()
        folder.named(WALKED)
        folder.kept(_sessions_in)
    between()
    listings.files(folders, WALKED)  # what is left: one sort


def warm_marks(ws: Workspace, between: Callable[[], None]) -> None:
    """Make ahead the first look for sessions marked `status: conflict` (each session's status from the search
    index, where it holds the session as it is: kbsync.app.conflicts.marked_sessions), which a process's first
    report makes and the later ones keep. `between` is called between steps of a few milliseconds."""
    from kbsync.app.conflicts import marked_sessions

    marked_sessions(ws, _sessions(listings.walk(ws.root, between)), between)


def report(ws: Workspace, now: float | None = None) -> Report:
    """Everything `kbsync status` shows: git's HEAD, what waits (from the work tree), the daemon's state."""
    pid = daemon_pid(ws)
    saved = daemonstatus.read(ws.root) if pid else DaemonStatus()
    scene = scene_of(ws, saved, now)
    waiting = _once([w for check in CHECKS for w in check(scene)])
    daemon = {"updated": saved.updated, "last_event": saved.last_event, "last_repair": saved.last_repair}
    return Report(str(ws.root), pid is not None, pid, history.head_commit(ws.root) if repo.is_repo(ws.root) else None,
                  last_sync(saved.jobs.get("sync"), state.load(ws)), waiting, len(scene.changed),
                  saved.pending, {**daemon, "jobs": saved.jobs}, machine_id(ws),
                  flagged_records(ws), semantic_state(ws), classified_records(ws))


def semantic_state(ws: Workspace) -> dict[str, Any] | None:
    """The semantic index: texts chosen and embedded, whether a build ever finished and one runs now."""
    if not ws.config.search.semantic:
        return None
    from kbsync.retrieval.semanticclient import building, progress

    got = progress(ws)
    return {"units": got.units if got else 0, "embedded": got.embedded if got else 0,
            "built": bool(got and got.built), "building": building(ws)}


def flagged_records(ws: Workspace) -> list[dict[str, Any]]:
    """Indexed records that carry an embedded instruction: path, key, families (from the search index) and,
    for a session, its id."""
    from kbsync.retrieval.index import flagged

    return [{"path": r.relpath, "key": r.key, "families": r.families, **_session_id(r.relpath)} for r in flagged(ws)]


def _session_id(relpath: str) -> dict[str, Any]:
    from kbsync.core import protocol

    return {"session_id": protocol.id_from_relpath(relpath)} if protocol.classify(relpath) == "session" else {}


def classified_records(ws: Workspace) -> list[dict[str, Any]] | None:
    """Indexed records the instruction classifier flags (kbsync.retrieval.semanticflags): path, key, family
    "classifier", the unit it flags (head or passage n) and, for a session, its id; None when the semantic leg is
    off, where the rules alone run (docs/security.md says what that costs)."""
    if not ws.config.search.semantic:
        return None
    from kbsync.core.detect.injectionclassifier import FAMILY
    from kbsync.retrieval import semanticflags, semanticstore

    return [{"path": c.relpath, "key": c.key, "families": [FAMILY], "unit": c.span, **_session_id(c.relpath)}
            for c in semanticflags.flagged(semanticstore.db_path(ws.state_dir))]


def last_sync(job: dict[str, Any] | None, synced: dict[str, Any]) -> dict[str, Any] | None:
    """The daemon's last sync job, or a sync any process completed later (`kbsync sync`, from sync.json)."""
    at, remote = synced.get("at"), synced.get("remote")
    if not (isinstance(at, str) and isinstance(remote, str)) or (job and str(job.get("time", "")) >= at):
        return job
    return {"time": at, "ok": True, "result": f"synced with {synced.get('where', 'the remote')} at {remote[:7]}"}


def _when(item: dict[str, Any] | None, key: str) -> str:
    if not item:
        return "none"
    return f"{item.get(key, '')} at {item.get('time', '?')}"


def _commit_line(c: dict[str, Any] | None) -> str:
    if not c:
        return "none"
    return f"{str(c['sha'])[:7]} {c.get('message', '')} at {c.get('time', '?')}" + (
        f" (by {c['author']})" if c.get("author") else "")


def render(rep: Report) -> str:
    """The human-readable form of a report."""
    d = rep.daemon
    lines = [
        f"workspace:   {rep.workspace}",
        f"machine:     {rep.machine} (names this machine's conflict copies)",
        f"daemon:      running (pid {rep.pid})" if rep.running else "daemon:      not running",
        f"last event:  {_when(d.get('last_event'), 'path')}",
        f"last repair: {_when(d.get('last_repair'), 'path')}",
        f"last commit: {_commit_line(rep.last_commit)}",
        f"last sync:   {_when(rep.last_sync, 'result')}",
        f"pending:     {len(rep.pending)} file(s)" + (" in the daemon's queue" if rep.pending else ""),
        *(f"  {p}" for p in rep.pending[:20]),
        f"uncommitted: {rep.uncommitted} file(s)",
    ]
    lines.append(f"semantic:    {_semantic_line(rep.semantic)}")
    lines.append(f"flagged:     {len(rep.flagged)} indexed record(s) carry an embedded instruction")
    lines += [f"  {f['key']}: {', '.join(f['families'])}" for f in rep.flagged]
    lines.append("classifier:  off (the rules alone: [search] semantic = false)" if rep.classified is None else
                 f"classifier:  {len(rep.classified)} indexed record(s) read as an instruction by their meaning")
    lines += [f"  {f['key']}: classifier ({f['unit']})" for f in rep.classified or []]
    people = sum(1 for w in rep.waiting if w.settle_by == "person")
    lines.append(f"waiting:     {len(rep.waiting)} ({people} for a person, {len(rep.waiting) - people} for time)"
                 if rep.waiting else "waiting:     nothing")
    lines += [f"  {w.path}: {_label(w)}{w.reason}" for w in rep.waiting if w.kind != "git-operation"]
    return "\n".join([w.reason for w in rep.of_kind("git-operation")] + lines)


def _semantic_line(sem: dict[str, Any] | None) -> str:
    if sem is None:
        return "off ([search] semantic = false)"
    units, done = sem["units"], sem["embedded"]
    part = f"{done:,} of {units:,} texts embedded" + (f" ({done * 100 // units}%)" if units else "")
    if sem["building"]:
        return part + ", being built" + ("" if sem["built"] else " (search answers by keyword until it is)")
    return part if sem["built"] else "not built yet (the daemon builds it, or `kbsync index rebuild --semantic`)"


def _label(w: Waiting) -> str:
    return "left out of commits: " if w.kind == "left-out" else ""


def recent_errors(ws: Workspace, count: int = 20) -> list[str]:
    """The last `count` non-blank lines of logs/errors.md, oldest first ([] when it does not exist yet)."""
    if not ws.path(protocol.ERRORS_LOG).exists():
        return []
    lines = [ln for ln in ws.read_text(protocol.ERRORS_LOG).splitlines() if ln.strip() and not ln.startswith("#")]
    return lines[-count:]

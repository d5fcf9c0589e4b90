"""Commit what is committable now: valid, unlocked, quiet files, with an honest message.

Used by `kbsync commit`, the daemon (hourly, at the end of a session, at
shutdown) and `kbsync sync`. Each changed file is read once; the bytes that
were checked are the bytes committed, so a half-written file can never land.
A file left out (locked, invalid, still changing, holding a secret) stays in
the work tree for a later commit, and the commit message lists it with why.
"""

from __future__ import annotations

import logging
import math
import os
import stat
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Sequence

from kbsync.config import parse_duration
from kbsync.core import protocol
from kbsync.core.detect.secrets import ALLOW_FILE, SecretFinding, parse_allowlist, scan_bytes
from kbsync.core.frontmatter import parse, split
from kbsync.core.validate import validate_text
from kbsync.errors import InputError
from kbsync.git import history, inprogress, objects, quiet, repo
from kbsync.store import fsio
from kbsync.store.workspace import Workspace, decode, left_out

if TYPE_CHECKING:
    from kbsync.results import CommitReport

log = logging.getLogger(__name__)

CAS_ATTEMPTS = 3
MAX_LISTED = 30
MAX_IDS = 3


@dataclass(frozen=True)
class CommitResult:
    sha: str | None  # None when nothing was committed
    message: str
    committed: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # relpath -> why it was left out
    blocked: str | None = None  # why no commit could be made at all (git's index.lock)
    checked: frozenset[tuple[str, str]] = frozenset()  # (relpath, blob sha) whose bytes passed the checks
    waiting: str | None = None  # what git is in the middle of (kbsync.git.inprogress); nothing was committed

    def as_dict(self) -> CommitReport:
        return {"sha": self.sha, "message": self.message, "committed": self.committed,
                "skipped": self.skipped, "blocked": self.blocked, "waiting": self.waiting}

    def __str__(self) -> str:
        if self.waiting:
            return f"waiting: {self.waiting}; nothing is committed until it ends"
        if self.blocked:
            return f"blocked: {self.blocked}"
        if self.sha is None:
            return f"nothing to commit ({len(self.skipped)} left out)" if self.skipped else "nothing to commit"
        return f"{self.sha[:7]} {self.message.splitlines()[0]}"


# ---- what may be committed ------------------------------------------------------

def is_runtime_path(relpath: str) -> bool:
    """Paths that are never content: git's and kbsync's state, temp and lock files."""
    top = relpath.split("/", 1)[0]
    return top in protocol.IGNORED_DIRS or relpath.endswith("/") or fsio.is_temp_or_lock(relpath)


SecretScan = Callable[[str, bytes], list[SecretFinding]]


def secret_scanner(ws: Workspace) -> SecretScan:
    """kbsync.core.detect.secrets over a file's bytes, minus the fingerprints a person accepted in .kbsync-allow."""
    try:
        allowed = parse_allowlist(fsio.read_regular(ws.root / ALLOW_FILE)[0].decode("utf-8", "replace"))
    except FileNotFoundError:
        allowed = frozenset()
    except fsio.UnreadableError as exc:
        log.warning("%s: %s; scanning without it", ALLOW_FILE, exc.message)
        allowed = frozenset()
    return lambda relpath, data: scan_bytes(relpath, data, allowed)


def content_problem(ws: Workspace, relpath: str, data: bytes, scan: SecretScan) -> str | None:
    """Why these bytes of a file must not be committed (a secret, said first, or invalid), or None."""
    found = scan(relpath, data)
    if found:
        return f"secret: {found[0]}"
    if relpath.endswith(".md"):
        try:
            text = decode(data, relpath)
        except InputError as exc:
            return f"invalid: {exc}"
        errors = [f for f in validate_text(relpath, text, ws.config) if f.level == "error"]
        if errors:
            return f"invalid: {errors[0]}"
    return None


def _stage_one(ws: Workspace, relpath: str, now: float, scan: SecretScan, mine: bool) -> repo.Staged | str:
    """The file as a Staged entry, or the reason it stays out. A lock on it (on a removed file too: a writer
    may be removing it as one step of several) keeps it out, unless `mine`: the committing caller holds it."""
    if "\n" in relpath:
        return "invalid: its name holds a line break, which git's batch commands cannot name; rename it"
    path = ws.path(relpath)

    def locked() -> bool:
        return not mine and fsio.lock_held(path)

    if not os.path.lexists(path):
        return "locked" if locked() else repo.Staged(relpath, None)
    unreadable = fsio.unreadable_reason(path)
    if unreadable:
        return unreadable
    why = left_out(path)
    if why:
        return why
    if not path.is_file():
        return "not a regular file"
    if locked():
        return "locked"
    try:
        data, fp = fsio.read_with_fingerprint(path)
    except FileNotFoundError:
        return "changing"
    except fsio.UnreadableError as exc:
        return exc.message
    if now - fp.mtime_ns / 1e9 < ws.config.daemon.quiet_ms / 1000:
        return "changing"
    problem = content_problem(ws, relpath, data, scan)
    if problem:
        return problem
    st = path.stat()
    if st.st_mtime_ns != fp.mtime_ns or st.st_size != len(data) or locked():
        return "changing"
    return repo.Staged(relpath, data, bool(st.st_mode & stat.S_IXUSR))


def select(ws: Workspace, relpaths: Sequence[str], now: float,
           held: frozenset[str] = frozenset()) -> tuple[list[repo.Staged], dict[str, str]]:
    """Split changed paths into what is staged and what is left out (with why); the caller holds the locks
    of the paths in `held`."""
    scan = secret_scanner(ws)
    staged: list[repo.Staged] = []
    skipped: dict[str, str] = {}
    for rel in relpaths:
        if is_runtime_path(rel):
            continue
        got = _stage_one(ws, rel, now, scan, rel in held)
        if isinstance(got, str):
            skipped[rel] = got
        else:
            staged.append(got)
    return staged, skipped


# ---- sessions that close in a commit -----------------------------------------------

def session_status(text: str) -> str | None:
    """The `status` field of a file's frontmatter, if it can be read."""
    sp = split(text.replace("\r\n", "\n"))
    mapping = parse(sp.lines).mapping if sp.state == "ok" else None
    value = mapping.get("status") if mapping else None
    return value if isinstance(value, str) else None


def is_closed_session(relpath: str, data: bytes) -> bool:
    return protocol.classify(relpath) == "session" and session_status(data.decode("utf-8", "replace")) == "closed"


def newly_closed(ws: Workspace, head: str | None, files: Sequence[repo.Staged]) -> list[str]:
    """The session files that are closed in these bytes but were not closed at `head`."""
    closed = [f.relpath for f in files if f.data is not None and is_closed_session(f.relpath, f.data)]
    before = repo.blobs_at(ws.root, head, closed)
    return [rel for rel in closed if (old := before[rel]) is None or not is_closed_session(rel, old)]


# ---- the message (pure) ------------------------------------------------------------

_ORDER = ("session", "index", "board", "memory", "log", "artifact", "candidate", "other")
_NAMED = {"index": "index", "board": "board", "memory": "memory", "log": "logs"}
_COUNTED = {"session": ("session", "sessions"), "artifact": ("artifact", "artifacts"),
            "candidate": ("candidate list", "candidate lists"), "other": ("other file", "other files")}


def breakdown(files: Sequence[repo.Staged]) -> str:
    """`12 files (3 sessions, index, logs)`."""
    kinds = [protocol.classify(f.relpath) for f in files]
    parts = []
    for kind in _ORDER:
        n = kinds.count(kind)
        if n and kind in _NAMED:
            parts.append(_NAMED[kind])
        elif n:
            one, many = _COUNTED[kind]
            parts.append(f"{n} {one if n == 1 else many}")
    deleted = sum(1 for f in files if f.data is None)
    if deleted:
        parts.append(f"{deleted} deleted")
    noun = "file" if len(files) == 1 else "files"
    return f"{len(files)} {noun} ({', '.join(parts)})"


def session_title(relpath: str) -> str:
    m = protocol.SESSION_NAME_RE.match(relpath.rsplit("/", 1)[-1])
    return (m.group(4) or "") if m else ""


def subject_for(reason: str, files: Sequence[repo.Staged], closed: Sequence[str]) -> str:
    if len(closed) == 1:
        title = session_title(closed[0])
        sid = protocol.id_from_relpath(closed[0])
        return f"session {sid} closed: {title}" if title else f"session {sid} closed"
    if closed:
        ids = [protocol.id_from_relpath(c) or c for c in closed[:MAX_IDS]]
        more = ", …" if len(closed) > MAX_IDS else ""
        return f"{len(closed)} sessions closed: {', '.join(ids)}{more}"
    return f"{reason}: {breakdown(files)}"


def compose(reason: str, message: str | None, files: Sequence[repo.Staged], closed: Sequence[str],
            skipped: dict[str, str]) -> str:
    """The full commit message: subject, what is in it, what was left out and why."""
    subject = message.strip() if message and message.strip() else subject_for(reason, files, closed)
    lines = [subject]
    if message or closed:
        lines += ["", f"{reason}: {breakdown(files)}"]
    if skipped:
        lines += ["", f"Left out for a later commit ({len(skipped)}):"]
        lines += [f"- {rel}: {why}" for rel, why in sorted(skipped.items())[:MAX_LISTED]]
        if len(skipped) > MAX_LISTED:
            lines.append(f"- and {len(skipped) - MAX_LISTED} more")
    return "\n".join(lines) + "\n"


# ---- committing ---------------------------------------------------------------------

def commit_pending(ws: Workspace, *, reason: str, message: str | None = None,
                   now: Callable[[], float] = time.time, settle_s: float = 0.0) -> CommitResult:
    """Commit every committable changed file of the workspace; see the module docstring. With `settle_s`,
    first wait up to that long for files written a moment ago to go quiet (kbsync.git.quiet)."""
    dcfg = ws.config.daemon
    if settle_s:
        quiet.wait_until_quiet(ws, settle_s, now=now)
    try:
        repo.wait_index_unlocked(ws.root, dcfg.lock_wait_s)
    except repo.IndexLockedError as exc:
        log.warning("commit postponed: %s", exc)
        return CommitResult(None, "", blocked=str(exc))
    for _ in range(CAS_ATTEMPTS):
        if (busy := inprogress.in_progress(ws.root)) is not None:
            log.debug("commit postponed: waiting: %s", busy)
            return CommitResult(None, "", waiting=busy)
        head = repo.head_sha(ws.root)
        staged, skipped = select(ws, repo.changed_paths(ws.root), now())
        for rel, why in skipped.items():
            log.info("left out of the commit: %s (%s)", rel, why)
        if not staged:
            return CommitResult(None, "", skipped=skipped)
        closed = newly_closed(ws, head, staged)
        text = with_machine(ws, compose(reason, message, staged, closed, skipped))
        try:
            sha = repo.commit_files(ws.root, staged, text, expected_head=head,
                                       author=(dcfg.author_name, dcfg.author_email))
        except repo.HeadMovedError:
            log.info("HEAD moved while committing; building the commit again on the new HEAD")
            continue
        if sha is None:
            return CommitResult(None, "", skipped=skipped)
        log.debug("committed %s: %s", sha[:7], text.splitlines()[0])  # the caller says it, once
        checked = frozenset((f.relpath, objects.object_id("blob", f.data)) for f in staged if f.data is not None)
        return CommitResult(sha, text, [f.relpath for f in staged], skipped, checked=checked)
    raise repo.HeadMovedError(f"HEAD kept moving during {CAS_ATTEMPTS} attempts; try again", path=str(ws.root))


def with_machine(ws: Workspace, text: str) -> str:
    """The message with a `Kbsync-Machine: <id>` trailer: which machine made the commit (for `kbsync conflicts`)."""
    from kbsync.store.machine import machine_id

    return f"{text.rstrip()}\n\n{history.MACHINE_TRAILER}: {machine_id(ws)}\n"


def commit_paths(ws: Workspace, relpaths: Sequence[str], message: str, held: frozenset[str] = frozenset()) -> CommitResult:
    """Commit exactly `relpaths` as they are now (a person's action: no quiet time), each checked as by every
    commit (valid, no secret, unlocked but for the locks in `held`, which the caller holds); nothing is
    committed when one of them is left out."""
    dcfg = ws.config.daemon
    for _ in range(CAS_ATTEMPTS):
        head = repo.head_sha(ws.root)
        staged, skipped = select(ws, relpaths, math.inf, held)
        if skipped:
            return CommitResult(None, "", skipped=skipped)
        text = with_machine(ws, message)
        try:
            sha = repo.commit_files(ws.root, staged, text, expected_head=head, author=(dcfg.author_name, dcfg.author_email))
        except repo.HeadMovedError:
            continue
        return CommitResult(sha, text if sha else "", [f.relpath for f in staged] if sha else [])
    raise repo.HeadMovedError(f"HEAD kept moving during {CAS_ATTEMPTS} attempts; try again", path=str(ws.root))


def scheduled_reason(ws: Workspace) -> str:
    """`hourly` with the default `[daemon] commit_every`, else `every 30m` and the like."""
    every = ws.config.daemon.commit_every
    return "hourly" if parse_duration(every, key="daemon.commit_every") == 3600 else f"every {every}"


def scheduled_commit(ws: Workspace) -> CommitResult:
    """The timed commit job."""
    return commit_pending(ws, reason=scheduled_reason(ws))

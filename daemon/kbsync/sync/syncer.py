"""`kbsync sync`: commit what is committable, pull, integrate, scan, push; never blind, never forced.

One round: read the remote head (transport.pull), integrate it locally
(kbsync.sync.plan, the same rules for git and the GitHub API), scan what would
be sent for secrets, push without force. A push refused because the remote
moved meanwhile starts another round after a jittered backoff, a bounded
number of times. The last remote commit integrated or pushed is kept in
`.kbsync/sync.json` (kbsync.sync.state); in API mode its tree is the base of
the next integration.
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Callable, cast

from kbsync import proc
from kbsync.errors import EXIT_OK, EXIT_PROBLEMS, RemoteError, SecretFoundError
from kbsync.git import repo
from kbsync.git.commit import CommitResult, commit_pending, secret_scanner
from kbsync.store import fsio
from kbsync.store.workspace import Workspace
from kbsync.sync import merge, state
from kbsync.sync.transports.base import RemoteHead, Transport

if TYPE_CHECKING:
    from kbsync.results import SyncReport

log = logging.getLogger(__name__)

LOCK_NAME = "sync"


@dataclass
class SyncResult:
    mode: str
    remote_head: str | None = None
    pushed: bool = False
    pulled: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    rounds: int = 0
    committed: str | None = None  # the sha `sync` committed first, if any
    requests: int = 0  # HTTP requests sent (github-api mode)
    waiting: str | None = None  # what git is in the middle of; nothing was synced (kbsync.git.inprogress)

    @property
    def exit_code(self) -> int:
        return EXIT_PROBLEMS if self.conflicts or self.waiting else EXIT_OK

    def as_dict(self) -> SyncReport:
        return cast("SyncReport", asdict(self))

    def __str__(self) -> str:
        if self.waiting:
            return f"waiting: {self.waiting}; nothing is synced until it ends"
        head = self.remote_head[:7] if self.remote_head else "none"
        parts = [f"synced with the remote at {head}", f"{len(self.pulled)} file(s) from the remote",
                 "pushed" if self.pushed else "nothing to push"]
        if self.conflicts:
            parts.append(f"{len(self.conflicts)} conflict cop{'y' if len(self.conflicts) == 1 else 'ies'} "
                         f"for a person: {', '.join(self.conflicts)}")
        return "; ".join(parts)


def make_transport(ws: Workspace) -> Transport:
    """The transport `[sync] mode` names."""
    if ws.config.sync.mode == "github-api":
        from kbsync.sync.transports.github import from_config

        return from_config(ws, state.known_remote(ws))
    from kbsync.sync.transports.gitremote import GitTransport

    return GitTransport(ws.root, ws.config.sync.remote, ws.config.sync.branch, ws.config.sync.timeout_s)


def remote_configured(ws: Workspace) -> bool:
    """Whether this workspace has a remote to sync with (the daemon's timed sync runs only then)."""
    if ws.config.sync.mode == "github-api":
        return bool(ws.config.github.repository)
    return repo.is_repo(ws.root) and repo.has_remote(ws.root, ws.config.sync.remote)


def sync(ws: Workspace, transport: Transport | None = None, *, sleep: Callable[[float], None] = proc.pause,
         jitter: Callable[[], float] = random.random) -> SyncResult:
    """Sync the workspace with its remote; see the module docstring."""
    chosen = transport or make_transport(ws)
    ws.state_dir.mkdir(parents=True, exist_ok=True)
    cfg = ws.config.daemon
    with fsio.locked(ws.state_dir / LOCK_NAME, ttl_s=max(cfg.lock_ttl_s, 600), wait_s=cfg.lock_wait_s):
        first: CommitResult = commit_pending(ws, reason="sync")
        if first.waiting:
            return SyncResult(chosen.mode, waiting=first.waiting)
        result = SyncResult(chosen.mode, committed=first.sha)
        try:
            _rounds(ws, chosen, result, first.checked, sleep, jitter)
        finally:
            result.requests = chosen.requests_sent
        log.info("sync %s: %s (%d round%s, %d request%s)", where(chosen), result, result.rounds,
                 "" if result.rounds == 1 else "s", result.requests, "" if result.requests == 1 else "s")
        return result


def _rounds(ws: Workspace, transport: Transport, result: SyncResult, checked: frozenset[tuple[str, str]],
            sleep: Callable[[float], None], jitter: Callable[[], float]) -> SyncResult:
    retries = ws.config.sync.max_retries
    for attempt in range(retries + 1):
        result.rounds, started = attempt + 1, time.monotonic()
        remote = transport.pull()
        head = repo.head_sha(ws.root)
        if remote is not None:
            base = transport.base_tree(head, remote, lambda: synced_tree(ws, transport))
            merged = merge.integrate_remote(ws, head, remote, base)
            head = merged.head
            result.pulled += [p for p in merged.pulled if p not in result.pulled]
            result.conflicts += merged.copies
            for copy in merged.copies:
                log.warning("conflict: %s saved (this machine's version) for a person to settle", copy)
            save_state(ws, transport, remote)
        if head is None:
            return result
        check_outgoing(ws, [o for o in transport.outgoing(head, remote) if o not in checked])
        pushed = transport.push(head, remote)
        if pushed is not None:
            save_state(ws, transport, pushed)
            result.remote_head, result.pushed = pushed.commit, remote is None or pushed.commit != remote.commit
            return result
        wait = backoff_s(time.monotonic() - started, attempt + 1, jitter())
        log.info("the remote moved while pushing (race %d lost); integrating again in %.1fs", attempt + 1, wait)
        sleep(wait)
    raise RemoteError(f"the remote kept moving during {retries + 1} rounds; nothing was lost, sync again")


BACKOFF_CAP_S = 30.0
BACKOFF_MIN_WINDOW_S = 0.2


def backoff_s(window_s: float, lost: int, draw: float) -> float:
    """The wait after losing the race to push `lost` times in a row: a uniform draw (`draw` in [0, 1)) over as
    many windows as there are contenders. The window is how long the lost round took here (pull to refused
    push: others need about as long); the contenders are estimated from the races lost, doubling with each,
    so the machines that lost spread over the time they need to push one after another. Capped at 30 s."""
    return min(BACKOFF_CAP_S, max(BACKOFF_MIN_WINDOW_S, window_s) * float(2 ** lost) * draw)


# ---- what leaves the machine ---------------------------------------------------------

def check_outgoing(ws: Workspace, outgoing: list[tuple[str, str]]) -> None:
    """Refuse to send runtime state or anything the secret scan flags; names file and line. (The blobs the
    commit made by this sync already passed the same scan, so the caller leaves them out.)"""
    for relpath, _sha in outgoing:
        if relpath.split("/", 1)[0] == ".kbsync":
            raise SecretFoundError(f"runtime state is committed and would be sent; remove it from git ({relpath})",
                                   path=relpath)
    if not outgoing:
        return
    scan = secret_scanner(ws)
    for (relpath, _sha), data in zip(outgoing, repo.read_blobs(ws.root, [sha for _p, sha in outgoing])):
        findings = scan(relpath, data or b"")
        if findings:
            raise SecretFoundError(f"{findings[0]}; nothing was sent: remove the secret, commit, and sync again",
                                   path=relpath, line=getattr(findings[0], "line", None))


# ---- state -------------------------------------------------------------------------------

def synced_tree(ws: Workspace, transport: Transport) -> str | None:
    """The tree of the last remote commit integrated from this transport's remote, if still held locally."""
    synced = state.load(ws)
    tree = synced.get("tree")
    if synced.get("where") != where(transport) or not isinstance(tree, str):
        return None
    return tree if repo.has_object(ws.root, tree) else None


def where(transport: Transport) -> str:
    return f"{transport.mode}:{transport.where}"


def save_state(ws: Workspace, transport: Transport, remote: RemoteHead) -> None:
    state.save(ws, where(transport), remote.commit, remote.tree)

"""The search index catching up with the files, and what `status` keeps made ahead, off the answering path.

A read (a context pack, a page of sessions) reads the index as it was last committed. What kbsync writes is
indexed before the write returns, so a save is found at once; what something else wrote while no daemon
watched is found once a catch-up (`retrieval.index.refresh`: a look at each file) has run:

- the first read of a process that did not `start` catches up before it reads (a command: `kbsync context`);
- a server calls `start` when it begins serving: its first read, as every later one, asks for a background
  catch-up, and none of its reads waits for one;
- later reads ask for one at most every FRESH_S seconds. One background thread runs them, DELAY_S after the
  read that asked (so that it does not compete with that read's answer or page), and it steps aside while an
  answer is being made (`answering`, around each MCP tool call): it looks at a few hundred files at a time and,
  before the next few hundred, waits until no answer has been in progress for QUIET_S, so a client calling
  again and again is not slowed by it, and an answer is never held up for more than one such step;
- while the daemon runs, its watcher keeps the index current, and the background catch-up is left to it.

The same thread makes ahead what `status` keeps between reports, so that a server's first report costs what
the later ones do (whether or not the daemon runs): when the server calls `start`, every folder's listing
(kbsync.app.status.warm); when its first read asks for a catch-up, before that catch-up, the look through the
index for sessions marked `status: conflict` (kbsync.app.status.warm_marks: that read has loaded what reads
the index, which a server answering `initialize` never waits for). Each is done once, in steps, taking the
next whenever no answer is being made, without waiting QUIET_S, so that a client calling at once and again
and again finds them done within its first few calls. A report made meanwhile lists on its own what is not
listed yet, and reuses what is (kbsync.store.listings.walk).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
import time
from typing import TYPE_CHECKING, Callable, Iterator

from kbsync.errors import KbsyncError

if TYPE_CHECKING:
    from kbsync.store.workspace import Workspace

FRESH_S = 2.0  # a read asks for a catch-up when the last one started this long ago or more
DELAY_S = 0.5  # how long after the read that asked for it a catch-up starts (after a web page is sent, too)
QUIET_S = 0.1  # how long after the last answer ended a background catch-up takes its next step
_started: dict[str, float] = {}  # workspace root -> when (time.monotonic) its last catch-up was started or run
# what the background thread is to do, in order: (workspace root, what) -> the work
_wanted: dict[tuple[str, str], Callable[[], None]] = {}
_at_first_read: dict[str, Callable[[], None]] = {}  # workspace root -> what to do first when its first read asks
_lock = threading.Lock()
_answers = threading.Condition()  # guards _in_progress and _last_answer; notified when an answer ends
_in_progress = 0
_last_answer = -float("inf")  # when (time.monotonic) the last answer ended
_worker: threading.Thread | None = None  # the background thread, while it runs
THREAD = "kbsync catch-up"
log = logging.getLogger(__name__)


@contextlib.contextmanager
def answering() -> Iterator[None]:
    """Around an answer (a tool call): a background catch-up waits until it ends, and QUIET_S more, before
    its next step."""
    global _in_progress, _last_answer
    with _answers:
        _in_progress += 1
    try:
        yield
    finally:
        with _answers:
            _in_progress -= 1
            _last_answer = time.monotonic()
            _answers.notify_all()


def step_aside(quiet: float = QUIET_S) -> None:
    """Between two steps of a background catch-up: wait while any answer is being made, and until none has
    been for `quiet` seconds (a client that calls again and again is answered without the catch-up in between)."""
    with _answers:
        while True:
            left = _last_answer + quiet - time.monotonic()
            if not _in_progress and left <= 0:
                return
            _answers.wait(None if _in_progress else left)


def begin_command() -> None:
    """A command begins (kbsync.main): as the first of a process, its first read catches up before it reads,
    whatever an earlier command run in the same process (a test, a script calling `main`) read."""
    with _lock:
        _started.clear()


def start(ws: Workspace) -> None:
    """A server begins serving `ws`: its first read asks for a background catch-up as the later ones do, and
    no read of this process waits for one. The background thread makes what `status` keeps at once, and its
    look through the index before the first catch-up."""
    key = str(ws.root)
    with _lock:
        _started.setdefault(key, time.monotonic() - FRESH_S)
        _want((key, "warm"), functools.partial(_warm, ws))
        _at_first_read.setdefault(key, functools.partial(_warm_marks, ws))


def catch_up_due(ws: Workspace) -> bool:
    """Whether this read must have the index catch up with the files before it reads: only the first read of a
    process that did not `start`. Any other read asks for a background catch-up when the last one started
    FRESH_S or more ago, and reads the index as it is."""
    now, key = time.monotonic(), str(ws.root)
    with _lock:  # reads are served on several threads
        last = _started.get(key)
        if last is not None and now - last < FRESH_S:
            return False
        _started[key] = now
        if last is None:
            return True
        first = _at_first_read.pop(key, None)
        if first is not None:
            _want((key, "warm marks"), first)
        _want((key, "catch-up"), functools.partial(_catch_up, ws))
    return False


def _want(what: tuple[str, str], work: Callable[[], None]) -> None:
    """Have the background thread do `work` (started when none runs; the caller holds _lock), unless the same
    is wanted already."""
    global _worker
    _wanted.setdefault(what, work)
    if _worker is None:
        _worker = threading.Thread(target=_work, name=THREAD, daemon=True)
        _worker.start()


def _work() -> None:
    """Do what is wanted, until nothing is; then end (the next thing wanted starts another thread)."""
    global _worker
    while True:
        with _lock:
            if not _wanted:
                _worker = None
                return
            work = _wanted.pop(next(iter(_wanted)))
        try:
            work()
        except BaseException:  # an unforeseen error ends this thread: the next thing wanted starts another
            with _lock:
                _worker = None
            raise


def _catch_up(ws: Workspace) -> None:
    time.sleep(DELAY_S)
    step_aside()  # the answer that asked for it first, and its imports
    from kbsync.app.status import daemon_pid
    from kbsync.retrieval import db, index

    try:
        if daemon_pid(ws) is None:  # a running daemon's watcher keeps the index: nothing to do here
            index.refresh(ws, step_aside)
    except (KbsyncError, OSError, db.Error) as exc:
        log.warning("the search index did not catch up with the files: %s; the next read tries again", exc)
        with _lock:
            _started[str(ws.root)] = time.monotonic() - FRESH_S  # due again at the next read


def _warm(ws: Workspace) -> None:
    """The folders' listings `status` keeps between reports, made before the first (kbsync.app.status.warm)."""
    from kbsync.app.status import warm

    try:
        warm(ws, _between_answers)
    except (KbsyncError, OSError) as exc:
        log.warning("status's listings were not made ahead: %s; the first status makes them", exc)


def _warm_marks(ws: Workspace) -> None:
    """The sessions marked `status: conflict`, looked up once ahead of the first status through the search
    index (kbsync.app.status.warm_marks)."""
    _between_answers()
    from kbsync.app.status import warm_marks
    from kbsync.retrieval import db

    try:
        warm_marks(ws, _between_answers)
    except (KbsyncError, OSError, db.Error) as exc:
        log.warning("the sessions marked status: conflict were not looked up ahead: %s; the first status does it",
                    exc)


def _between_answers() -> None:
    """Between two steps of a warm-up: wait while an answer is being made (not QUIET_S more: it is done once)."""
    step_aside(0.0)

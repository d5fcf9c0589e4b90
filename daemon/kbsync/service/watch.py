"""Filesystem events into a debounce queue: the watchdog handler only enqueues.

An exception inside a watchdog handler ends the observer thread, so the
handler does nothing but turn an event into workspace-relative paths and touch
them in the Debouncer. The one worker thread takes paths once they have been
quiet for `quiet_ms`. A lost-events signal (inotify queue overflow, or more
pending paths than the queue holds) asks the worker for a full catch-up scan.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Callable

from watchdog.events import (DirCreatedEvent, DirDeletedEvent, DirMovedEvent, FileClosedEvent, FileCreatedEvent,
                             FileDeletedEvent, FileModifiedEvent, FileMovedEvent, FileSystemEvent,
                             FileSystemEventHandler)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from kbsync.store import fsio
from kbsync.core import protocol

log = logging.getLogger(__name__)

MAX_PENDING = 50_000
# Writes, creations, deletions and moves only: opens and reads (git's, ours) are not asked for.
EVENTS: list[type[FileSystemEvent]] = [FileCreatedEvent, FileModifiedEvent, FileDeletedEvent, FileMovedEvent,
                                       FileClosedEvent, DirCreatedEvent, DirDeletedEvent, DirMovedEvent]
Clock = Callable[[], float]


class Debouncer:
    """Paths with the time they become due; thread-safe; the clock is injected."""

    def __init__(self, quiet_s: float, clock: Clock = time.monotonic, max_pending: int = MAX_PENDING) -> None:
        self.quiet_s = quiet_s
        self._clock = clock
        self._max = max_pending
        self._due: dict[str, float] = {}
        self._cond = threading.Condition()
        self.rescan = False

    def touch(self, relpath: str, *, now: bool = False) -> None:
        """(Re)start the quiet period of `relpath`; `now=True` makes it due at once."""
        with self._cond:
            if len(self._due) >= self._max and relpath not in self._due:
                self.rescan = True
            else:
                self._due[relpath] = self._clock() + (0.0 if now else self.quiet_s)
            self._cond.notify()

    def request_rescan(self) -> None:
        with self._cond:
            self.rescan = True
            self._cond.notify()

    def take_rescan(self) -> bool:
        with self._cond:
            asked, self.rescan = self.rescan, False
            return asked

    def take_due(self, limit: int = 500) -> list[str]:
        """Up to `limit` paths whose quiet period is over, oldest first; removed from the queue."""
        with self._cond:
            now = self._clock()
            ready = sorted((t, p) for p, t in self._due.items() if t <= now)[:limit]
            for _, p in ready:
                del self._due[p]
            return [p for _, p in ready]

    def wait(self, timeout: float) -> None:
        """Sleep until the next path is due, something is touched, a wake-up, or `timeout`."""
        with self._cond:
            if self._due:
                timeout = min(timeout, max(0.0, min(self._due.values()) - self._clock()))
            if timeout > 0 and not self.rescan:
                self._cond.wait(timeout)

    def wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def __len__(self) -> int:
        with self._cond:
            return len(self._due)

    def pending(self) -> list[str]:
        with self._cond:
            return sorted(self._due)


def relpath_of(root: str, path: str) -> str | None:
    """The workspace-relative path an event is about, or None if kbsync ignores it.

    Ignored: .git/ and .kbsync/, temp files. A lock file stands for its file (its
    removal is what makes a locked file ready).
    """
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    if rel.startswith("..") or rel == ".":
        return None
    if rel.split("/", 1)[0] in protocol.IGNORED_DIRS:
        return None
    if rel.endswith(protocol.LOCK_SUFFIX):
        return rel[: -len(protocol.LOCK_SUFFIX)]
    if fsio.is_temp_or_lock(rel):
        return None
    return rel


class Handler(FileSystemEventHandler):
    """Turns events into Debouncer touches; never raises, never does I/O."""

    def __init__(self, root: Path, queue: Debouncer, on_event: Callable[[str], None]) -> None:
        self._root = str(root)
        self._queue = queue
        self._on_event = on_event

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory:
            if event.event_type == "moved":  # a folder moved in: its files raise no events of their own
                self._queue.request_rescan()
            return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            path = os.fsdecode(raw) if raw else ""
            rel = relpath_of(self._root, path) if path else None
            if rel:
                self._queue.touch(rel)
                self._on_event(rel)


class OverflowAlarm(logging.Handler):
    """Watchdog reports a kernel queue overflow only in its log; that record asks for a rescan."""

    def __init__(self, queue: Debouncer) -> None:
        super().__init__(logging.WARNING)
        self._queue = queue

    def emit(self, record: logging.LogRecord) -> None:
        if "overflow" in record.getMessage().lower():
            self._queue.request_rescan()


def start_observer(root: Path, handler: Handler, queue: Debouncer) -> tuple[BaseObserver, OverflowAlarm]:
    """A running recursive observer on `root`, and the overflow alarm hooked into watchdog's log.

    watchdog's own debug lines (one per inotify event) are kept out of `-v`.
    """
    alarm = OverflowAlarm(queue)
    wd_log = logging.getLogger("watchdog")
    wd_log.setLevel(logging.WARNING)
    wd_log.addHandler(alarm)
    observer = Observer()
    observer.schedule(handler, str(root), recursive=True, event_filter=EVENTS)
    observer.start()
    return observer, alarm


def stop_observer(observer: BaseObserver, alarm: OverflowAlarm) -> None:
    logging.getLogger("watchdog").removeHandler(alarm)
    observer.stop()
    observer.join(timeout=5)

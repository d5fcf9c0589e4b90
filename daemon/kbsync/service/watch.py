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

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch

from kbsync.core import protocol
from kbsync.store import fsio

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
        self._woken = False  # a wake-up not yet slept through: the next wait returns at once

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
        """Sleep until the next path is due, something is touched, a wake-up, or `timeout`. A wake-up that came
        while nobody waited ends the next wait at once, so none is lost between a check and the sleep."""
        with self._cond:
            if self._due:
                timeout = min(timeout, max(0.0, min(self._due.values()) - self._clock()))
            if timeout > 0 and not self.rescan and not self._woken:
                self._cond.wait(timeout)
            self._woken = False

    def wake(self) -> None:
        with self._cond:
            self._woken = True
            self._cond.notify_all()

    def __len__(self) -> int:
        with self._cond:
            return len(self._due)

    def __contains__(self, relpath: object) -> bool:
        with self._cond:
            return relpath in self._due

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
            if event.event_type == "moved" or self._top_level(event):
                self._queue.request_rescan()  # a folder moved in raises no events for its files; a new
            return  # top-level folder needs a watch of its own first
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            path = os.fsdecode(raw) if raw else ""
            rel = relpath_of(self._root, path) if path else None
            if rel:
                self._queue.touch(rel)
                self._on_event(rel)

    def _top_level(self, event: FileSystemEvent) -> bool:
        path = os.fsdecode(event.src_path)
        return event.event_type in ("created", "deleted") and os.path.dirname(path) == self._root


class OverflowAlarm(logging.Handler):
    """Watchdog reports a kernel queue overflow only in its log; that record asks for a rescan."""

    def __init__(self, queue: Debouncer) -> None:
        super().__init__(logging.WARNING)
        self._queue = queue

    def emit(self, record: logging.LogRecord) -> None:
        if "overflow" in record.getMessage().lower():
            self._queue.request_rescan()


class Watches:
    """The observer and its watches: the workspace's root alone (its own files), and each top-level folder but
    `.git/` and `.kbsync/` recursively, so that inotify never watches git's objects or kbsync's backups.

    `sync` reconciles the watches with the folders on disk; the worker calls it before each catch-up scan,
    which a top-level folder created, moved or deleted asks for (the scan finds what the new folder holds).
    """

    def __init__(self, root: Path, handler: Handler, queue: Debouncer) -> None:
        self.root, self._handler = root, handler
        self.alarm = OverflowAlarm(queue)
        self.observer: BaseObserver = Observer()
        self._folders: dict[str, ObservedWatch] = {}

    def start(self) -> None:
        wd_log = logging.getLogger("watchdog")
        wd_log.setLevel(logging.WARNING)  # watchdog's own debug lines (one per inotify event) stay out of `-v`
        wd_log.addHandler(self.alarm)
        self.observer.schedule(self._handler, str(self.root), recursive=False, event_filter=EVENTS)
        self.sync()
        self.observer.start()

    def sync(self) -> None:
        """Watch every top-level folder that exists (again, if it was deleted and made anew), and only those."""
        present = set(watched_folders(self.root))
        for name in [n for n in self._folders if n not in present or not self._alive(n)]:
            self.observer.unschedule(self._folders.pop(name))
        for name in sorted(present - set(self._folders)):
            self._folders[name] = self.observer.schedule(self._handler, str(self.root / name), recursive=True,
                                                         event_filter=EVENTS)

    def _alive(self, name: str) -> bool:
        return any(e.watch == self._folders[name] and e.is_alive() for e in self.observer.emitters)

    def stop(self) -> None:
        logging.getLogger("watchdog").removeHandler(self.alarm)
        self.observer.stop()
        self.observer.join(timeout=5)


def watched_folders(root: Path) -> list[str]:
    """The top-level folders the daemon watches: all but the ignored ones (and symlinks)."""
    try:
        entries = list(os.scandir(root))
    except OSError:
        return []
    return sorted(e.name for e in entries
                  if e.name not in protocol.IGNORED_DIRS and e.is_dir(follow_symlinks=False))


def start_observer(root: Path, handler: Handler, queue: Debouncer) -> Watches:
    """Running watches on the workspace (see Watches), with the overflow alarm hooked into watchdog's log."""
    watches = Watches(root, handler, queue)
    watches.start()
    return watches

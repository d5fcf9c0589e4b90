"""The daemon's jobs (sync, scan, the search index) on a thread of their own, one at a time, each with a
deadline, so that no job ever holds the worker that repairs and commits.

A job runs under `proc.deadline`: every program it starts, and every HTTP request of the GitHub client,
ends by then. A job still running `grace_s` past its deadline (stuck in Python, not in a program) is
left to finish on its own thread: it is reported as failed, the jobs after it go on on a fresh thread,
and the same job is not started again until that run has ended. `stop` drops what has not started,
gives the running job a moment, then kills every program still running (kbsync.proc).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass
from typing import Callable

from kbsync import proc
from kbsync.errors import KbsyncError

log = logging.getLogger(__name__)

GRACE_S = 5.0


@dataclass(frozen=True)
class Finished:
    """One job run that ended: its name, whether it succeeded, and what it returned (or why it failed)."""

    name: str
    ok: bool
    result: object


Job = tuple[str, Callable[[], object]]


class JobRunner:
    def __init__(self, deadline_s: float, grace_s: float = GRACE_S, on_end: Callable[[], None] = lambda: None) -> None:
        """`on_end` is called on the job thread each time a run ends (the daemon wakes its worker, which hands
        the next job what waited for this one)."""
        self.deadline_s, self.grace_s, self._on_end = deadline_s, grace_s, on_end
        self._queue: queue.Queue[Job | None] = queue.Queue()
        self._done: queue.Queue[Finished] = queue.Queue()
        self._active: set[str] = set()  # names queued or running (an abandoned run included, until it ends)
        self._lock = threading.Lock()
        self._running: tuple[str, float] | None = None  # (name, monotonic start) on the current thread
        self._generation = 0
        self._thread = self._start()

    def submit(self, name: str, fn: Callable[[], object]) -> bool:
        """Queue job `name`; False (and nothing queued) while a run of it is queued or still running."""
        with self._lock:
            if name in self._active:
                return False
            self._active.add(name)
        self._queue.put((name, fn))
        return True

    def busy(self) -> bool:
        """Whether a job is queued or running."""
        with self._lock:
            return bool(self._active)

    def finished(self) -> list[Finished]:
        """The runs that ended since the last call (the worker turns them into status)."""
        out: list[Finished] = []
        while True:
            try:
                out.append(self._done.get_nowait())
            except queue.Empty:
                return out

    def check(self) -> None:
        """Abandon the running job once it is `grace_s` past its deadline, and go on with the next ones."""
        running = self._running
        if running is None or time.monotonic() - running[1] < self.deadline_s + self.grace_s:
            return
        name = running[0]
        log.error("job %s is still running %.0f s after its deadline; left to end on its own, the other jobs go on",
                  name, self.grace_s)
        self._done.put(Finished(name, False, f"still running past its deadline of {self.deadline_s:g} s"))
        self._running = None
        self._thread = self._start()

    def stop(self, grace_s: float) -> None:
        """Drop the jobs not started, wait up to `grace_s` for the running one, then kill every program left."""
        while True:
            try:
                self._queue.get_nowait()
            except queue.Empty:
                break
        self._queue.put(None)
        self._thread.join(grace_s)
        if proc.kill_children():
            log.info("stopped the programs a job was still running")
        self._thread.join(1.0)

    # ---- the job thread ---------------------------------------------------------------

    def _start(self) -> threading.Thread:
        self._generation += 1
        thread = threading.Thread(target=self._loop, args=(self._generation,), name="kbsync-jobs", daemon=True)
        thread.start()
        return thread

    def _loop(self, generation: int) -> None:
        while generation == self._generation:
            item = self._queue.get()
            if item is None:
                return
            name, fn = item
            self._running = (name, time.monotonic())
            outcome = self._run(name, fn)
            with self._lock:
                self._active.discard(name)
            if generation == self._generation:
                self._running = None
                self._done.put(outcome)
            self._on_end()

    def _run(self, name: str, fn: Callable[[], object]) -> Finished:
        try:
            with proc.deadline(self.deadline_s):
                return Finished(name, True, fn())
        except KbsyncError as exc:
            log.error("job %s failed: %s", name, exc)
            return Finished(name, False, exc)
        except Exception as exc:
            log.exception("job %s failed", name)
            return Finished(name, False, exc)

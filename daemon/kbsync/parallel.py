"""Work over many files on every core: worker processes over batches, the results in the order of the input.

`batches(fn, items)` cuts `items` into batches of `size` and yields `(batch, fn(batch))` in input order, so a
caller that joins the results gets what a serial run gives, byte for byte. With fewer than `MIN_PARALLEL`
items, or one core, everything is done in this process, a batch of one item each (no start-up cost for the
hook or one file, and a caller's progress counts every item).
Otherwise one worker process per core takes one batch at a time. `items` may be an iterator (a walk of the
workspace): it is read as batches are handed out, never more than `WINDOW` batches per worker ahead of the
one to yield next, so neither the input nor the results wait in memory as a whole. Each batch has a time bound; a batch that
outlives it, a worker that dies or a worker whose `fn` raised is a PoolError naming the batch's first and
last item: nothing is skipped silently. The workers are forked where this process runs a single thread (the
command line), and started from a fresh server process where it runs several (forking a threaded process can
copy a held lock); they never outlive the call.
"""

from __future__ import annotations

import gc
import itertools
import os
import signal
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Generic, Iterable, Iterator, Sized, TypeVar

from kbsync.errors import EXIT_ENVIRONMENT, KbsyncError

if TYPE_CHECKING:  # multiprocessing is imported only when a pool starts: one file's validate never pays for it
    from multiprocessing.connection import Connection

T = TypeVar("T")
R = TypeVar("R")

MIN_PARALLEL = 400  # fewer items than this are done in this process: a pool's start-up would cost more
BATCH = 200
BATCH_TIMEOUT_S = 120.0  # one batch of files takes well under a second; this bound is for a worker that hangs
WINDOW = 4  # batches per worker handed out or done ahead of the one to yield next: a slow batch holds up no more


class PoolError(KbsyncError):
    """A batch of work did not come back from its worker process; nothing of it counts as done."""

    exit_code = EXIT_ENVIRONMENT  # the machine failed the work (a killed or hung process), not the files


WORKERS_ENV = "KBSYNC_WORKERS"


def workers() -> int:
    """How many worker processes the work may use: `KBSYNC_WORKERS` when set to a whole number (1: all in
    this process), else the cores this process may run on."""
    given = os.environ.get(WORKERS_ENV, "")
    if given.strip().isdigit() and int(given) > 0:
        return int(given)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def batches(fn: Callable[[list[T]], R], items: Iterable[T], *, size: int = BATCH,
            timeout_s: float = BATCH_TIMEOUT_S, jobs: int | None = None) -> Iterator[tuple[list[T], R]]:
    """`(batch, fn(batch))` for consecutive batches of `items`, in order; see the module's docstring. `fn` must
    be picklable (a module-level function, or a functools.partial of one over picklable values)."""
    total = -(-len(items) // size) if isinstance(items, Sized) else None
    rest = iter(items)
    n = jobs or workers()
    head = list(itertools.islice(rest, max(MIN_PARALLEL, n * size)))
    n = min(n, -(-len(head) // size))
    if len(head) < MIN_PARALLEL or n < 2:  # in this process, a batch of one each: progress counts every item
        return (([item], fn([item])) for item in itertools.chain(head, rest))
    return _Pool(fn, _cut(itertools.chain(head, rest), size), n, timeout_s, total).run()


def _cut(items: Iterator[T], size: int) -> Iterator[list[T]]:
    while batch := list(itertools.islice(items, size)):
        yield batch


@dataclass
class _Worker:
    process: Any  # multiprocessing's BaseProcess of the chosen context
    conn: Connection
    index: int | None = None  # the batch in hand
    since: float = 0.0


@dataclass
class _Pool(Generic[T, R]):
    fn: Callable[[list[T]], R]
    source: Iterator[list[T]]
    n: int
    timeout_s: float
    total: int | None  # the number of batches, when known ahead
    given: dict[int, list[T]] = field(default_factory=dict)  # handed out or done, not yet yielded
    done: dict[int, R] = field(default_factory=dict)
    sent: int = 0
    next: int = 0  # the batch to yield next

    def run(self) -> Iterator[tuple[list[T], R]]:
        crew = [self._start() for _ in range(self.n)]
        try:
            for w in crew:
                self._give(w)
            while True:
                while self.next not in self.done:
                    if all(w.index is None for w in crew):
                        return  # every batch was yielded, and the input is used up
                    self._collect(crew)
                index, self.next = self.next, self.next + 1
                batch, result = self.given.pop(index), self.done.pop(index)
                for w in crew:  # the window moved on: a worker held back gets a batch again
                    if w.index is None:
                        self._give(w)
                yield batch, result
        finally:
            _stop(crew)

    def _start(self) -> _Worker:
        import multiprocessing

        single = threading.active_count() == 1
        ctx = multiprocessing.get_context("fork") if single else multiprocessing.get_context("forkserver")
        ours, theirs = ctx.Pipe()
        process = ctx.Process(target=_serve, args=(theirs, self.fn), daemon=True, name="kbsync-pool")
        process.start()
        theirs.close()
        return _Worker(process, ours)

    def _give(self, w: _Worker) -> None:
        """Hand `w` the next batch of the input, unless the input is used up or the window is full."""
        w.index = None
        if self.sent - self.next >= WINDOW * self.n:
            return
        batch = next(self.source, None)
        if batch is not None:
            w.index, w.since = self.sent, time.monotonic()
            self.given[self.sent] = batch
            w.conn.send((self.sent, batch))
            self.sent += 1

    def _collect(self, crew: list[_Worker]) -> None:
        """Wait for a worker to hand back its batch (within the batch's time bound) and give it the next."""
        busy = [w for w in crew if w.index is not None]
        left = min(w.since for w in busy) + self.timeout_s - time.monotonic()
        from multiprocessing.connection import wait

        ready = wait([w.conn for w in busy], timeout=max(0.0, left))
        if not ready:
            late = min(busy, key=lambda w: w.since)
            raise PoolError(f"{self._name(late)}: a worker took longer than {self.timeout_s:.0f} s; "
                            "none of these files was checked; run again, or on fewer files")
        for w in busy:
            if w.conn in ready:
                self._receive(w)
                self._give(w)

    def _receive(self, w: _Worker) -> None:
        assert w.index is not None
        try:
            index, ok, value = w.conn.recv()
        except (EOFError, OSError):
            w.process.join(1.0)
            raise PoolError(f"{self._name(w)}: the worker process died (exit {w.process.exitcode}); "
                            "none of these files was checked; run again") from None
        if not ok:
            raise PoolError(f"{self._name(w)}: the worker failed: {value}")
        self.done[index] = value

    def _name(self, w: _Worker) -> str:
        assert w.index is not None
        batch = self.given[w.index]
        of = f" of {self.total}" if self.total is not None else ""
        return f"files {batch[0]} to {batch[-1]} (batch {w.index + 1}{of})"


def _stop(crew: list[_Worker]) -> None:
    """End every worker: a clean goodbye to an idle one, a kill to one still at work."""
    for w in crew:
        try:
            if w.index is None:
                w.conn.send(None)
        except OSError:
            pass
        w.conn.close()
    for w in crew:
        w.process.join(1.0 if w.index is None else 0.0)
        if w.process.is_alive():
            w.process.kill()
            w.process.join()


def _serve(conn: Connection, fn: Callable[[list[Any]], Any]) -> None:
    """A worker: batches in, results out, until told to stop or the parent's end closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it ends the workers
    gc.freeze()  # what a forked worker inherits is never garbage: no collection walks (and copies) it again
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        index, batch = job
        try:
            conn.send((index, True, fn(batch)))
        except Exception as exc:  # sent to the parent, which names the batch
            conn.send((index, False, f"{type(exc).__name__}: {exc}"))

"""kbsync.service.watch: the debounce queue (injected clock) and which paths events stand for."""

from __future__ import annotations

import threading
import time

import pytest

from kbsync.service.watch import Debouncer, relpath_of


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_a_path_is_due_after_it_has_been_quiet() -> None:
    clock = Clock()
    q = Debouncer(0.3, clock)
    q.touch("a.md")
    clock.t += 0.2
    q.touch("a.md")  # another write restarts the quiet period
    clock.t += 0.2
    assert q.take_due() == []
    clock.t += 0.1
    assert q.take_due() == ["a.md"] and len(q) == 0


def test_now_makes_a_path_due_at_once_and_oldest_come_first() -> None:
    clock = Clock()
    q = Debouncer(0.3, clock)
    q.touch("b.md", now=True)
    clock.t += 0.01
    q.touch("a.md", now=True)
    clock.t += 0.01
    assert q.take_due() == ["b.md", "a.md"]


def test_take_due_respects_its_limit() -> None:
    clock = Clock()
    q = Debouncer(0.0, clock)
    for n in range(10):
        q.touch(f"{n}.md")
    assert len(q.take_due(limit=4)) == 4 and len(q) == 6


def test_a_full_queue_asks_for_a_rescan_instead_of_growing() -> None:
    q = Debouncer(0.3, Clock(), max_pending=2)
    for name in ("a.md", "b.md", "c.md"):
        q.touch(name)
    assert q.pending() == ["a.md", "b.md"]
    assert q.take_rescan() and not q.take_rescan()


def test_a_wake_up_that_came_before_the_wait_is_not_lost() -> None:
    """A job that ends between the worker's last look and its sleep must still wake it: the next wait returns at
    once, and only that one (a later wait sleeps until its timeout, or a touch)."""
    q = Debouncer(quiet_s=0.5, clock=Clock())
    q.wake()
    returned = threading.Event()
    waiter = threading.Thread(target=lambda: (q.wait(600), returned.set()), daemon=True)
    waiter.start()
    assert returned.wait(60), "a wake-up before the wait was lost: the worker would sleep out its nap"
    returned.clear()
    waiter = threading.Thread(target=lambda: (q.wait(600), returned.set()), daemon=True)
    waiter.start()
    time.sleep(0.2)
    assert not returned.is_set()  # the wake-up was used up by the first wait
    q.wake()
    assert returned.wait(60)


@pytest.mark.parametrize(("path", "rel"), [
    ("/ws/sessions/2025-06-11/a.md", "sessions/2025-06-11/a.md"),
    ("/ws/memory/facts.md.lock", "memory/facts.md"),
    ("/ws/memory/.facts.md.0a1b2c3d4e5f.tmp", None),
    ("/ws/.git/index", None),
    ("/ws/.kbsync/status.json", None),
    ("/elsewhere/a.md", None),
    ("/ws", None),
])
def test_relpath_of(path: str, rel: str | None) -> None:
    assert relpath_of("/ws", path) == rel

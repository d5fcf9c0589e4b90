"""The suite's guard against leaked threads: a block that leaves behind a non-daemon thread it started
fails (as watchdog's own tests do), since such a thread keeps a process from exiting."""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Iterator

# Threads made once per process on purpose, which a test may be the first to start: not a test's leak
PROCESS_THREADS = ("kbsync-search",)  # retrieval/search.py's pool for folder and command sources


# The default executor of the event loop that Playwright's sync API keeps open for a module of browser tests
# (tests/web/pages/conftest.py `browser`): a test may be the first to start one of its threads, which end
# with the loop, after the module's last test
BROWSER_THREADS = ("asyncio_",)


def _leaks(before: set[threading.Thread], allowed: tuple[str, ...]) -> list[threading.Thread]:
    return [t for t in threading.enumerate()
            if t not in before and not t.daemon and t.is_alive() and not t.name.startswith(allowed)]


@contextmanager
def no_thread_leaks(grace: float, allowed: tuple[str, ...] = PROCESS_THREADS) -> Iterator[None]:
    """Fail (AssertionError naming the threads) when a non-daemon thread started inside the block is still
    alive `grace` seconds after it (a thread that is ending has that long to end); threads whose names start
    with one of `allowed` aside."""
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + grace
    for thread in _leaks(before, allowed):
        thread.join(max(0.0, deadline - time.monotonic()))
    leaked = [t.name for t in _leaks(before, allowed)]
    assert not leaked, f"the test left these threads running: {', '.join(leaked)}"

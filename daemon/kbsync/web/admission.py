"""Which connections the local server keeps: a flood of connections that send nothing (no token needed to
open one) must not starve the requests that carry the token, nor the daemon's own file-system work.

- A connection must send a complete request head within HEAD_TIMEOUT_S of being accepted (or of the end of
  its previous answer, when kept alive), else it is closed: a byte at a time does not keep it.
- At most `limit` connections are held at once, `limit` sized from the open-files limit with RESERVED_FDS
  left over for the daemon's repairs, commits and git, and ACCEPT_SLACK for the sockets accepted and not
  yet handed to a connection (asyncio accepts up to BACKLOG in one turn of its loop, and a socket reaches
  `connection_made`, and a refused one its close, a turn or two later). A connection accepted beyond that takes the place of
  the one that has waited longest for a request head; when every connection is in a request, it is closed
  at accept, before a byte is read. A connection is never counted against a request: uvicorn's own
  `limit_concurrency` (which answered 503 to a request with the token once 256 idle connections were open)
  is not used.
- What the event loop reports about accepting (`socket.accept() out of system resource`, one report a
  second under uvicorn), the connections closed or refused, and uvicorn's warning about each malformed
  request (`Invalid HTTP request received.`) are logged once per LOG_EVERY_S, with counts.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from typing import Any, Callable

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

log = logging.getLogger(__name__)

HEAD_TIMEOUT_S = 5.0
RESERVED_FDS = 256  # open files kept for the daemon's own work, whatever the server holds
BACKLOG = 64  # the listen queue, and how many sockets asyncio accepts in one turn of its loop
ACCEPT_SLACK = 4 * BACKLOG
MAX_CONNECTIONS = 4096
MIN_CONNECTIONS = 16
LOG_EVERY_S = 60.0


def connection_limit(open_files: int | None = None) -> int:
    """How many connections the server holds at once under an open-files limit (this process's soft one)."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0] if open_files is None else open_files
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(MIN_CONNECTIONS, min(MAX_CONNECTIONS, soft - RESERVED_FDS - ACCEPT_SLACK))


class Tally:
    """Events counted and logged at most once per `every` seconds: the first at once, the rest as a count."""

    def __init__(self, every: float = LOG_EVERY_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.every, self.clock = every, clock
        self._counts: dict[str, int] = {}
        self._last: dict[str, float] = {}

    def note(self, what: str, detail: str = "", level: int = logging.WARNING) -> bool:
        """Count one `what`; log it (with how many came since the last line) unless one was logged within
        `every`. True when a line was written."""
        self._counts[what] = self._counts.get(what, 0) + 1
        now = self.clock()
        if what in self._last and now - self._last[what] < self.every:
            return False
        count, self._counts[what] = self._counts[what], 0
        self._last[what] = now
        log.log(level, "%s%s%s", what, f" ({detail})" if detail else "",
                    f"; {count} times since the last such line" if count > 1 else "")
        return True


class Admission:
    """The connections of one server: those held, and among them those waiting for a request head (oldest
    first)."""

    def __init__(self, limit: int, tally: Tally, head_timeout_s: float = HEAD_TIMEOUT_S) -> None:
        self.limit, self.tally, self.head_timeout_s = limit, tally, head_timeout_s
        self.held: set[GuardedProtocol] = set()
        self.waiting: dict[GuardedProtocol, None] = {}  # insertion order: the longest waiting first

    def admit(self, conn: GuardedProtocol) -> bool:
        if len(self.held) >= self.limit:
            victim = next(iter(self.waiting), None)
            if victim is None:
                self.tally.note("connection refused at accept: every held connection is in a request",
                                f"{self.limit} at most")
                return False
            self.tally.note("connection closed to make room: it had sent no request head yet",
                            f"{self.limit} connections at most")
            self.leave(victim)
            victim.transport.abort()
        self.held.add(conn)
        return True

    def leave(self, conn: GuardedProtocol) -> None:
        self.held.discard(conn)
        self.waiting.pop(conn, None)


class GuardedProtocol(HttpToolsProtocol):
    """uvicorn's HTTP protocol under an Admission (set on the subclass `for_admission` makes)."""

    admission: Admission

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._refused = False
        self._head_timer: asyncio.TimerHandle | None = None

    @classmethod
    def for_admission(cls, admission: Admission) -> type[GuardedProtocol]:
        return type("GuardedHttpProtocol", (cls,), {"admission": admission})

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if not self.admission.admit(self):
            self._refused = True
            transport.abort()  # type: ignore[attr-defined]
            return
        super().connection_made(transport)  # type: ignore[arg-type]
        self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._refused:
            return
        self._head_arrived()
        self.admission.leave(self)
        super().connection_lost(exc)

    def on_headers_complete(self) -> None:
        self._head_arrived()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.timeout_keep_alive_task is not None:  # kept alive, idle: the next head is awaited
            self._await_head()

    def _await_head(self) -> None:
        self._head_arrived()
        self.admission.waiting[self] = None
        self._head_timer = self.loop.call_later(self.admission.head_timeout_s, self._head_late)

    def _head_arrived(self) -> None:
        self.admission.waiting.pop(self, None)
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_late(self) -> None:
        self._head_timer = None
        if self.transport.is_closing():
            return
        self.admission.tally.note("connection closed: no complete request head",  # a browser's preconnect, too
                                  f"within {self.admission.head_timeout_s:g} s", logging.INFO)
        self.admission.leave(self)
        self.transport.abort()


class Repeats(logging.Filter):
    """On uvicorn's logger: its warnings, one per malformed or refused request (anyone can send those), go
    through the tally instead; its errors (the application's) pass as they are."""

    def __init__(self, tally: Tally) -> None:
        super().__init__()
        self.tally = tally

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.WARNING:
            return True
        self.tally.note(f"uvicorn: {record.getMessage()}")
        return False


UVICORN_LOGGER = "uvicorn.error"


def loop_errors(tally: Tally) -> Callable[[asyncio.AbstractEventLoop, dict[str, Any]], None]:
    """An event-loop exception handler: failed accepts (out of file descriptors, above all) counted and logged
    once per interval; everything else as asyncio logs it."""

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        message = str(context.get("message", ""))
        if message.startswith("socket.accept()"):
            tally.note("accepting a connection failed", f"{context.get('exception') or message}")
            return
        loop.default_exception_handler(context)
    return handle

"""What the server holds, decided at accept (kbsync.web.admission), and the open-files limit it is sized from
(kbsync.openfiles). The flood itself, on real sockets, is in test_flood.py."""

from __future__ import annotations

import asyncio
import logging
import resource
import subprocess
import sys
from typing import Any, cast

import pytest

from kbsync.web.admission import (
    ACCEPT_SLACK,
    MAX_CONNECTIONS,
    MIN_CONNECTIONS,
    RESERVED_FDS,
    Admission,
    GuardedProtocol,
    Tally,
    connection_limit,
    loop_errors,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_repeated_event_is_logged_once_per_interval_with_its_count(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    tally = Tally(every=60.0, clock=clock)
    caplog.set_level(logging.INFO, logger="kbsync.web.admission")
    written = [tally.note("accepting a connection failed", "[Errno 24] Too many open files") for _ in range(10_000)]
    assert written.count(True) == 1
    clock.now += 61
    assert tally.note("accepting a connection failed", "[Errno 24] Too many open files")
    lines = [r.getMessage() for r in caplog.records]
    assert lines == ["accepting a connection failed ([Errno 24] Too many open files)",
                     "accepting a connection failed ([Errno 24] Too many open files); "
                     "10000 times since the last such line"]


def test_failed_accepts_reach_the_log_once_other_loop_errors_as_asyncio_logs_them(
        caplog: pytest.LogCaptureFixture) -> None:
    handle = loop_errors(Tally(every=60.0, clock=Clock()))
    loop = asyncio.new_event_loop()
    try:
        for _ in range(1_000):
            handle(loop, {"message": "socket.accept() out of system resource", "exception": OSError(24, "Too many")})
        handle(loop, {"message": "something else broke"})
    finally:
        loop.close()
    assert sum("accepting a connection failed" in r.getMessage() for r in caplog.records) == 1
    assert any(r.name == "asyncio" and "something else broke" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("open_files, held", [
    (1_024, 1_024 - RESERVED_FDS - ACCEPT_SLACK), (65_536, MAX_CONNECTIONS), (300, MIN_CONNECTIONS),
    (resource.RLIM_INFINITY, MAX_CONNECTIONS)])
def test_connections_held_leave_room_for_the_daemons_own_files(open_files: int, held: int) -> None:
    assert connection_limit(open_files) == held


class Transport:
    def __init__(self) -> None:
        self.aborted = False

    def abort(self) -> None:
        self.aborted = True


class Conn:
    """What Admission sees of a connection: its transport."""

    def __init__(self) -> None:
        self.transport = Transport()


def test_a_full_server_drops_the_longest_idle_connection_and_refuses_only_when_all_are_in_requests() -> None:
    admission = Admission(limit=3, tally=Tally(clock=Clock()))
    a, b, c, d, e = (cast(GuardedProtocol, Conn()) for _ in range(5))
    for conn in (a, b, c):
        assert admission.admit(conn)
    admission.waiting.update({b: None, a: None})  # b has waited longest for a request head; c is in a request
    assert admission.admit(d)
    assert cast(Any, b).transport.aborted and not cast(Any, a).transport.aborted and b not in admission.held
    assert admission.admit(e)  # then a
    assert cast(Any, a).transport.aborted
    assert not admission.admit(cast(GuardedProtocol, Conn()))  # c, d, e all in requests: refused at accept
    assert admission.held == {c, d, e}


def test_the_soft_open_files_limit_is_raised_to_the_hard_one() -> None:
    script = ("import resource; from kbsync import openfiles; print(openfiles.raise_soft_limit(), "
              "resource.getrlimit(resource.RLIMIT_NOFILE))")
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    start = (256, min(hard, 1_024))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, start))
    assert done.stdout.split() == ["(256,", f"{start[1]})", f"({start[1]},", f"{start[1]})"]

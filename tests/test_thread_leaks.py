"""The suite's guard against leaked threads (helpers/threads.py, autouse in conftest.py): a block that
leaves a non-daemon thread running fails and names it; threads that end, and daemon threads, pass."""

from __future__ import annotations

import threading

import pytest

from helpers.threads import no_thread_leaks


def test_a_thread_left_running_fails_and_is_named() -> None:
    stop = threading.Event()
    try:
        with pytest.raises(AssertionError, match="left these threads running: lingering"):
            with no_thread_leaks(grace=0.1):
                threading.Thread(target=stop.wait, name="lingering").start()
    finally:
        stop.set()


def test_a_thread_that_ends_within_the_grace_passes() -> None:
    stop = threading.Event()
    with no_thread_leaks(grace=5):
        threading.Thread(target=stop.wait, name="ending").start()
        threading.Timer(0.05, stop.set).start()


def test_a_daemon_thread_is_not_a_leak() -> None:
    stop = threading.Event()
    try:
        with no_thread_leaks(grace=0.1):
            threading.Thread(target=stop.wait, name="daemonic", daemon=True).start()
    finally:
        stop.set()

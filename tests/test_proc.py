"""kbsync.proc, the one door for programs: time-outs and thread deadlines kill the whole process group, and
`kill_children` stops whatever is still running."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from kbsync import proc
from kbsync.errors import EXIT_ENVIRONMENT, TimedOutError


def test_a_deadline_bounds_every_program_of_its_thread(tmp_path: Path) -> None:
    started = time.monotonic()
    with proc.deadline(0.5), pytest.raises(TimedOutError, match="timed out after 0.5") as err:
        proc.run(["sh", "-c", "sleep 30 & sleep 30; wait"], cwd=tmp_path, timeout=60)
    assert time.monotonic() - started < 5 and err.value.exit_code == EXIT_ENVIRONMENT
    with proc.deadline(0.05):
        time.sleep(0.1)
        with pytest.raises(TimedOutError, match="deadline passed"):
            proc.run(["true"], cwd=tmp_path)
    assert proc.remaining(3.0) == 3.0  # outside the block: the program's own bound only


def test_the_nearer_of_two_deadlines_wins() -> None:
    with proc.deadline(100):
        with proc.deadline(1):
            left = proc.remaining(None)
            assert left is not None and left <= 1
        with proc.deadline(1000):
            left = proc.remaining(None)
            assert left is not None and 1 < left <= 100


def test_kill_children_stops_a_program_another_thread_waits_for(tmp_path: Path) -> None:
    marker = tmp_path / "late"
    errors: list[BaseException] = []

    def run() -> None:
        try:
            proc.run(["sh", "-c", f"sleep 30; touch {marker}"], cwd=tmp_path)
        except BaseException as exc:  # the killed program fails
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(0.3)
    started = time.monotonic()
    assert proc.kill_children() >= 1
    thread.join(10)
    assert not thread.is_alive() and time.monotonic() - started < 5 and errors and not marker.exists()


def test_a_pause_that_would_pass_the_deadline_is_not_begun() -> None:
    started = time.monotonic()
    with proc.deadline(2.0), pytest.raises(TimedOutError, match="would pass the job's deadline"):
        proc.pause(60.0)
    assert time.monotonic() - started < 1.0
    with proc.deadline(5.0):
        proc.pause(0.01)  # one that fits is made
    proc.pause(0.01)  # outside any deadline, as time.sleep

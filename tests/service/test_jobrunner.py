"""The daemon's job thread (kbsync.service.jobrunner): one job at a time, each under a deadline; a stuck job
is abandoned and never holds the ones after it; stop kills the programs a job still runs."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from helpers.daemon import wait_for
from kbsync import proc
from kbsync.service.jobrunner import JobRunner


def test_jobs_run_in_turn_and_report_how_they_ended() -> None:
    runner = JobRunner(deadline_s=10)
    assert runner.submit("a", lambda: "done")
    assert runner.submit("b", lambda: 1 / 0)
    finished: list[object] = []
    wait_for(lambda: finished.extend(runner.finished()) or len(finished) == 2, timeout=10)
    assert [(f.name, f.ok) for f in finished] == [("a", True), ("b", False)]  # type: ignore[attr-defined]
    runner.stop(1)


def test_a_job_is_not_queued_twice_while_it_runs() -> None:
    gate = threading.Event()
    runner = JobRunner(deadline_s=10)
    assert runner.submit("slow", gate.wait)
    assert not runner.submit("slow", gate.wait)
    gate.set()
    wait_for(lambda: bool(runner.finished()), timeout=10)
    assert runner.submit("slow", lambda: None)
    runner.stop(1)


def test_busy_while_a_job_is_queued_or_running() -> None:
    gate = threading.Event()
    runner = JobRunner(deadline_s=10)
    assert not runner.busy()
    runner.submit("slow", gate.wait)
    assert runner.busy()
    gate.set()
    wait_for(lambda: not runner.busy(), timeout=10)
    runner.stop(1)


def test_a_job_past_its_deadline_is_abandoned_and_the_next_one_runs() -> None:
    gate = threading.Event()
    runner = JobRunner(deadline_s=0.2, grace_s=0.2)
    runner.submit("stuck", gate.wait)  # stuck in Python, where no deadline can reach
    runner.submit("next", lambda: "ran")
    seen: list[object] = []

    def tend() -> bool:
        runner.check()
        seen.extend(runner.finished())
        return len(seen) == 2

    wait_for(tend, timeout=10)
    assert [(f.name, f.ok) for f in seen] == [("stuck", False), ("next", True)]  # type: ignore[attr-defined]
    assert not runner.submit("stuck", lambda: None)  # its abandoned run has not ended yet
    gate.set()
    wait_for(lambda: runner.submit("stuck", lambda: None), timeout=10)
    runner.stop(1)


def test_a_program_a_job_runs_ends_at_the_deadline_and_at_stop(tmp_path: Path) -> None:
    runner = JobRunner(deadline_s=0.5)
    runner.submit("sleeps", lambda: proc.run(["sleep", "30"], cwd=tmp_path))
    wait_for(lambda: bool(got := runner.finished()) and not got[0].ok, timeout=10)
    runner = JobRunner(deadline_s=60)
    runner.submit("sleeps", lambda: proc.run(["sleep", "30"], cwd=tmp_path))
    time.sleep(0.3)
    started = time.monotonic()
    runner.stop(0.2)
    assert time.monotonic() - started < 5


def test_the_end_of_each_run_is_told_after_its_outcome_is_there_to_collect() -> None:
    """The daemon passes its queue's wake-up: a job that ends wakes the worker, which then hands the next job the
    paths that waited for this one instead of sleeping out its idle nap."""
    told: list[list[str]] = []
    runner: JobRunner

    def on_end() -> None:
        told.append([f.name for f in runner.finished()])

    runner = JobRunner(deadline_s=10, on_end=on_end)
    runner.submit("a", lambda: "done")
    wait_for(lambda: len(told) == 1, timeout=10)
    runner.submit("b", lambda: 1 / 0)  # a failed run is told as well
    wait_for(lambda: len(told) == 2, timeout=10)
    assert told == [["a"], ["b"]]
    runner.stop(1)

"""An unexpected error (a bug) exits with its own code (70), in one line saying where the traceback is kept;
the traceback goes to the crash log, never to the terminal."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from kbsync import main as cli_main
from kbsync.cli import status
from kbsync.errors import EXIT_INTERNAL


def test_a_bug_is_one_line_and_exit_70_with_the_traceback_in_the_crash_log(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def broken(args: argparse.Namespace) -> int:
        raise TypeError("an unexpected None")

    monkeypatch.setattr(status, "run", broken)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    code = cli_main.main(["-w", str(tmp_path / "ws"), "status"])
    err = capsys.readouterr().err
    log = tmp_path / "state" / "kbsync" / "crash.log"
    assert code == EXIT_INTERNAL == 70
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "internal error (TypeError: an unexpected None)" in err and str(log) in err
    kept = log.read_text(encoding="utf-8")
    assert "Traceback" in kept and "an unexpected None" in kept and "status" in kept.splitlines()[0]


def test_a_crash_log_that_cannot_be_written_is_said_in_the_same_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def broken(args: argparse.Namespace) -> int:
        raise RuntimeError("boom")

    blocker = tmp_path / "state"
    blocker.write_text("a file where the folder would be", encoding="utf-8")
    monkeypatch.setattr(status, "run", broken)
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))
    assert cli_main.main(["-w", str(tmp_path / "ws"), "status"]) == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "cannot be written" in err and "-v" in err

"""Long work shows that it is working: a bar on a terminal, a log line every few seconds otherwise, nothing
with -q or --json."""

from __future__ import annotations

import fcntl
import logging
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from helpers.cli import Cli
from helpers.daemon import DaemonProcess, session_relpath, session_text, wait_for, write
from kbsync import progress

SESSIONS = 120


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from kbsync.app.workspace import init_workspace

    root = tmp_path_factory.mktemp("progress") / "ws"
    init_workspace(root)
    for n in range(SESSIONS):
        rel = session_relpath(n)
        write(root, rel, session_text(rel))
    return root


def test_log_lines_every_few_seconds_with_counts_and_an_estimate(caplog: pytest.LogCaptureFixture,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(progress.EVERY_ENV, "5")
    now = [100.0]
    with caplog.at_level(logging.INFO, logger="kbsync.progress"):
        with progress.Progress("index rebuild", 1000, "sessions", clock=lambda: now[0], mode="log") as shown:
            for _ in range(1000):
                now[0] += 1 / 128  # 7.8 s in all: one line, at 5 s
                shown.advance()
    lines = [r.getMessage() for r in caplog.records]
    assert lines == ["index rebuild: 640/1000 sessions (64%), about 3 s left"]
    assert progress.eta(10, 1000, 1.0) == "about 99 s left" and progress.eta(10, 1000, 10.0) == "about 16 min left"


def test_nothing_at_all_when_off(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    with caplog.at_level(logging.INFO, logger="kbsync.progress"):
        with progress.Progress("validate", 10, clock=lambda: now[0], mode="off") as shown:
            for _ in range(10):
                now[0] += 100
                shown.advance()
    assert caplog.records == []


def test_a_bar_on_a_terminal(many: Path) -> None:
    """`index rebuild` under a pseudo-terminal: a tqdm bar with counts on standard error."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KBSYNC_")}
    env[progress.EVERY_ENV] = "0"
    main, sub = pty.openpty()
    fcntl.ioctl(sub, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a terminal 100 columns wide
    proc = subprocess.Popen([sys.executable, "-m", "kbsync", "-w", str(many), "index", "rebuild"], stderr=sub,
                            stdout=subprocess.PIPE, env=env)
    os.close(sub)
    seen = b""
    try:
        while chunk := _read(main):
            seen += chunk
    finally:
        os.close(main)
    proc.wait(120)
    assert proc.stdout is not None
    proc.stdout = proc.stdout.read()  # type: ignore[assignment]
    assert proc.returncode == 0 and proc.stdout.decode().strip() == f"index.md: {SESSIONS} sessions"
    text = seen.decode("utf-8", "replace")
    assert "index rebuild" in text and f"/{SESSIONS}" in text and "sessions/s" in text, text


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 65536)
    except OSError:  # EIO: the other end is closed, the program has ended
        return b""


def test_log_lines_when_not_a_terminal_and_none_with_q_or_json(many: Path, cli: Cli) -> None:
    env = {progress.EVERY_ENV: "0"}
    proc = cli("validate", ws=many, env=env)
    assert proc.returncode == 0 and f"kbsync: validate: 1/{SESSIONS + 6} files" in proc.stderr, proc.stderr
    assert "\r" not in proc.stderr  # no bar drawn into a pipe
    assert cli("-q", "validate", ws=many, env=env).stderr == ""
    json_run = cli("validate", "--json", ws=many, env=env)
    assert json_run.stdout.strip() == "[]" and json_run.stderr == ""
    rebuild = cli("index", "rebuild", ws=many, env=env)
    assert f"index rebuild: {SESSIONS // 2}/{SESSIONS} sessions" in rebuild.stderr
    repair = cli("repair", ws=many, env=env)
    assert f"repair: 1/{SESSIONS + 6} files" in repair.stderr


def test_the_daemons_first_catch_up_shows_progress(many: Path) -> None:
    d = DaemonProcess(many, env={**os.environ, progress.EVERY_ENV: "0"})
    try:
        wait_for(lambda: re.search(r"catch-up: \d+/\d+ files \(\d+%\)", d.stderr()) is not None)
    finally:
        assert d.stop() == 0


def test_a_first_scan_shows_progress(tmp_path: Path, cli: Cli) -> None:
    ws, notes = tmp_path / "ws", tmp_path / "notes"
    for n in range(30):
        write(notes, f"n{n}.md", f"# 笔记 {n}\n\n内容\n")
    (ws / ".kbsync").mkdir(parents=True)
    (ws / ".kbsync" / "config.toml").write_text(f'[[scan.sources]]\nname = "notes"\npath = "{notes}"\n')
    proc = cli("scan", ws=ws, cwd=ws, env={progress.EVERY_ENV: "0"})
    assert proc.returncode == 0 and "scan notes: 1/30 files" in proc.stderr, proc.stderr

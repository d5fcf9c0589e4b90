"""The real daemon with a FIFO in the workspace and a remote that never answers: the worker goes on
repairing and committing while the sync job hangs, the FIFO is named and never opened, and SIGTERM ends
the daemon within 10 s with the final commit and no program left behind."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from helpers.cli import Cli
from helpers.daemon import DaemonProcess, git, head_files, session_relpath, session_text, wait_for, write
from helpers.silent import SilentServer, processes_in


@pytest.mark.slow
def test_a_hanging_sync_and_a_fifo_hold_nothing_up(tmp_path: Path, cli: Cli) -> None:
    root = tmp_path / "ws"
    assert cli("init", ws=root).returncode == 0
    (root / ".kbsync" / "config.toml").write_text(
        '[daemon]\nquiet_ms = 100\n[sync]\nevery = "1s"\ntimeout_s = 120.0\n', encoding="utf-8")
    os.mkfifo(root / "memory" / "pipe.md")
    with SilentServer() as remote:
        git(root, "remote", "add", "origin", f"git://127.0.0.1:{remote.port}/kb.git")
        d = DaemonProcess(root)
        try:
            wait_for(lambda: remote.connections >= 1, timeout=20)  # the sync job now waits on the remote
            closed = session_relpath(3)
            write(root, closed, session_text(closed, status="closed"))
            wait_for(lambda: closed in head_files(root), timeout=20)  # the worker was not held
            shown = cli("status", "--json", ws=root)
            assert shown.returncode == 1
            assert json.loads(shown.stdout)["unreadable"]["memory/pipe.md"].startswith("unreadable: a FIFO")
            assert processes_in(root)  # git fetch is still hanging
            last = session_relpath(4)
            write(root, last, session_text(last, status="open"))
            time.sleep(0.3)
            started = time.monotonic()
            d.proc.send_signal(signal.SIGTERM)
            assert d.stop(timeout=15) == 0
            assert time.monotonic() - started < 10
            assert processes_in(root) == []
            assert last in head_files(root)  # the final commit
        finally:
            d.kill()

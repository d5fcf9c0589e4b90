"""scripts/install-daemon run again replaces the running daemon, and says how far it got."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.daemon import wait_for

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "install-daemon"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def _install(tmp_path: Path, ws: Path) -> tuple[str, int]:
    venv = tmp_path / "venv" / "bin"  # the installed kbsync: this test's own, behind the venv's entry point
    venv.mkdir(parents=True, exist_ok=True)
    (venv / "kbsync").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m kbsync "$@"\n')
    (venv / "kbsync").chmod(0o755)
    fake = tmp_path / "no-systemd"  # a machine without a systemd user session
    fake.mkdir(exist_ok=True)
    (fake / "systemctl").write_text("#!/bin/sh\nexit 1\n")
    (fake / "systemctl").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KBSYNC_")}
    env.update({"KBSYNC_VENV": str(venv.parent), "HOME": str(tmp_path / "home"), "PATH": f"{fake}:{env['PATH']}"})
    proc = subprocess.run([str(SCRIPT), "--restart", str(ws)], capture_output=True, text=True, env=env, timeout=90)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    m = re.search(r"running in the background \(pid (\d+)\)", proc.stdout)
    assert m, proc.stdout
    return proc.stdout, int(m.group(1))


@pytest.mark.slow
def test_running_it_again_replaces_the_running_daemon(tmp_path: Path) -> None:
    ws = tmp_path / "kb"
    out, first = _install(tmp_path, ws)
    started: list[int] = [first]
    try:
        assert re.search(r"\[1/3\] workspace .*\n.*\[2/3\] stopping.*\n.*\[3/3\] starting", out), out
        assert _alive(first)
        out, second = _install(tmp_path, ws)
        started.append(second)
        assert f"stopping the running daemon (pid {first})" in out
        assert second != first and _alive(second)
        wait_for(lambda: not _alive(first), timeout=10)
        lock = (ws / ".kbsync" / "workspace.lock").read_text()
        assert f'"pid": {second}' in lock
    finally:
        for pid in started:
            if _alive(pid):
                os.kill(pid, signal.SIGTERM)
        wait_for(lambda: not any(_alive(p) for p in started), timeout=15)
    log = (ws / ".kbsync" / "daemon.log").read_text()
    assert log.count("watching") == 2

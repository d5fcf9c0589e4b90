"""systemd units: the shipped ones and `kbsync service install`, checked by `systemd-analyze verify`."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.cli import Cli
from helpers.daemon import DaemonProcess
from kbsync.service.units import render_unit

REPO = Path(__file__).resolve().parents[2]
needs_systemd = pytest.mark.skipif(shutil.which("systemd-analyze") is None,
                                   reason="systemd-analyze is not installed (Debian package systemd)")


def verify(unit: Path) -> None:
    proc = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True)
    assert proc.returncode == 0 and not proc.stderr.strip(), proc.stderr


@needs_systemd
def test_shipped_user_unit_verifies() -> None:
    verify(REPO / "systemd" / "kbsync.service")


@needs_systemd
def test_shipped_template_unit_verifies_as_an_instance(tmp_path: Path) -> None:
    shutil.copy(REPO / "systemd" / "kbsync@.service", tmp_path / "kbsync@.service")
    instance = tmp_path / "kbsync@home-me-kb.service"
    instance.symlink_to("kbsync@.service")
    verify(instance)


@needs_systemd
@pytest.mark.parametrize("user", [True, False])
def test_service_install_writes_a_unit_that_verifies(tmp_path: Path, user: bool, cli: Cli) -> None:
    ws, units = tmp_path / "my kb", tmp_path / "units"
    proc = cli("service", "install", *(["--user"] if user else []), "--dir", str(units), ws=ws)
    assert proc.returncode == 0, proc.stderr
    unit = units / "kbsync.service"
    verify(unit)
    text = unit.read_text()
    assert f'-w "{ws}" run' in text and f'ReadWritePaths="{ws}"' in text
    assert "NoNewPrivileges=yes" in text and "ProtectSystem=strict" in text and "Restart=on-failure" in text
    assert "LimitNOFILE=65536" in text  # the server's connections beside the daemon's own files
    assert ("systemctl --user enable --now kbsync.service" if user else "sudo systemctl enable") in proc.stdout
    assert (ws / ".git").is_dir(), "the workspace exists before the service is started"


@needs_systemd
def test_rendered_unit_escapes_percent(tmp_path: Path) -> None:
    unit = tmp_path / "kbsync.service"
    unit.write_text(render_unit(sys.executable, Path("/srv/kb 100%"), user=False, account="root"))
    verify(unit)
    assert '"/srv/kb 100%%"' in unit.read_text()


def test_daemon_notifies_systemd(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    addr = tmp_path / "notify.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(addr))
        sock.settimeout(30)
        d = DaemonProcess(root, env={**os.environ, "NOTIFY_SOCKET": str(addr)})
        assert sock.recv(100) == b"READY=1"
        assert d.stop() == 0
        assert sock.recv(100) == b"STOPPING=1"


def test_last_sync_is_the_later_of_the_daemons_and_any_other() -> None:
    from kbsync.app.status import last_sync

    job = {"time": "2025-06-11T06:35:00Z", "ok": True, "result": "daemon sync"}
    state = {"where": "git:origin/main", "remote": "3f9c2e1" + "0" * 33, "at": "2025-06-11T07:00:00Z"}
    assert last_sync(job, state) == {"time": "2025-06-11T07:00:00Z", "ok": True,
                                     "result": "synced with git:origin/main at 3f9c2e1"}
    assert last_sync({**job, "time": "2025-06-11T07:30:00Z"}, state)["result"] == "daemon sync"
    assert last_sync(None, {}) is None and last_sync(job, {}) == job


def test_every_unit_sets_the_open_files_limit() -> None:
    for unit in ("kbsync.service", "kbsync@.service"):
        assert "\nLimitNOFILE=65536\n" in (REPO / "systemd" / unit).read_text(encoding="utf-8"), unit
    assert "\nLimitNOFILE=65536\n" in render_unit(sys.executable, Path("/srv/kb"), user=True)

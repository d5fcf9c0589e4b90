"""A real, throw-away PostgreSQL server: initdb and pg_ctl on a temporary folder and a free port.

PostgreSQL refuses to run as root, so under root (as in CI) the server runs as
the `postgres` user (or `nobody`) through runuser. Skips, with the reason,
where PostgreSQL or psycopg is not installed.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from helpers.web import free_port


@dataclass(frozen=True)
class PgServer:
    dsn: str
    data: Path


def _as_user() -> tuple[list[str], str | None]:
    """The prefix that runs a command as a non-root user, and that user's name."""
    if os.geteuid() != 0:
        return [], None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        if shutil.which("runuser"):
            return ["runuser", "-u", name, "--"], name
    pytest.skip("running as root without a postgres user or runuser to start PostgreSQL as")


def _tool(name: str) -> str | None:
    """On PATH, else in Debian's versioned folder (the postgresql package does not link them)."""
    found = shutil.which(name)
    if found:
        return found
    versions = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"), key=lambda p: int(p.parts[-3]))
    return str(versions[-1]) if versions else None


def pg_server() -> Iterator[PgServer]:
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install 'kbsync[postgres]')")
    initdb, pg_ctl = _tool("initdb"), _tool("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip("PostgreSQL (initdb, pg_ctl) is not installed on this machine")
    prefix, user = _as_user()
    top = Path(tempfile.mkdtemp(prefix="kbsync-pg-"))
    data = top / "data"
    if user:
        shutil.chown(top, user)
    port = free_port()
    run = lambda *a: subprocess.run([*prefix, *a], capture_output=True, text=True, timeout=120)  # noqa: E731
    init = run(initdb, "-D", str(data), "-A", "trust", "-U", "kb", "--no-sync", "-E", "UTF8")
    if init.returncode != 0:
        shutil.rmtree(top, ignore_errors=True)
        pytest.skip(f"initdb failed: {init.stderr.strip()[-300:]}")
    opts = f"-p {port} -k {top} -c listen_addresses=127.0.0.1 -c fsync=off"
    start = run(pg_ctl, "-D", str(data), "-o", opts, "-l", str(top / "log"), "-w", "-t", "60", "start")
    try:
        if start.returncode != 0:
            pytest.skip(f"pg_ctl start failed: {start.stderr.strip()[-300:]}")
        yield PgServer(f"postgresql://kb@127.0.0.1:{port}/postgres", data)
    finally:
        run(pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(top, ignore_errors=True)

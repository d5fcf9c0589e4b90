"""The real daemon syncing over the API with an endpoint that tries to stall it: a `retry-after` of eleven days
and answers sent a byte at a time. Each sync ends (exit-3 "rate limited until ..." or a request given up at
its bound) within the job's deadline, no job is abandoned, the sync lock is let go, and the next sync, once the
endpoint behaves, pushes what was saved meanwhile."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Iterator

import pytest

from helpers.daemon import DaemonProcess, session_relpath, session_text, wait_for, write
from helpers.ghserver import GitHubServer
from helpers.sync import make_bare, open_ws, tree_files
from kbsync.app.workspace import init_workspace
from kbsync.sync.syncer import sync

TOKEN_ENV = "KBSYNC_TEST_TOKEN"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[GitHubServer]:
    with GitHubServer(make_bare(tmp_path / "remote.git")) as srv:
        yield srv


def api_workspace(tmp_path: Path, srv: GitHubServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "ws"
    init_workspace(root)
    (root / ".kbsync" / "config.toml").write_text(
        '[daemon]\nquiet_ms = 100\njob_deadline_s = 4.0\n'
        '[sync]\nmode = "github-api"\nevery = "1s"\ntimeout_s = 30.0\nmax_retries = 1\n'
        f'[github]\napi_url = "{srv.url}"\nrepository = "{srv.repository}"\ntoken_env = "{TOKEN_ENV}"\n',
        encoding="utf-8")
    monkeypatch.setenv(TOKEN_ENV, srv.token)
    sync(open_ws(root))
    sync(open_ws(root))  # the first sync seeded the empty repository; this one sends the rest
    return root


def sync_job(root: Path) -> dict[str, object]:
    try:
        jobs = json.loads((root / ".kbsync" / "status.json").read_text(encoding="utf-8")).get("jobs", {})
    except (OSError, ValueError):
        return {}
    found = jobs.get("sync", {})
    return found if isinstance(found, dict) else {}


def pushed(srv: GitHubServer, relpath: str) -> bool:
    return relpath in tree_files(srv.repo.path, "main")


@pytest.mark.slow
def test_a_stalling_api_holds_no_sync_past_its_deadline(
        tmp_path: Path, server: GitHubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    root = api_workspace(tmp_path, server, monkeypatch)
    for _ in range(3):  # three syncs in a row are told to come back in eleven days
        server.faults.secondary_limit("GET", "compare", 999999)
    d = DaemonProcess(root, env={**os.environ, TOKEN_ENV: server.token})
    try:
        wait_for(lambda: "rate limited until" in str(sync_job(root).get("result")), timeout=30)
        assert sync_job(root)["ok"] is False
        first = session_relpath(5)
        write(root, first, session_text(first, status="closed"))
        wait_for(lambda: pushed(server, first), timeout=60)  # the lock was let go: a later sync pushed it

        for _ in range(4):  # answers a byte every half second: each would take minutes
            server.faults.drip("GET", "compare")
        started = time.monotonic()
        wait_for(lambda: server.dripped_abandoned >= 1, timeout=30)
        assert time.monotonic() - started < 20  # given up at the job's deadline, not at the answer's end
        second = session_relpath(6)
        write(root, second, session_text(second, status="closed"))
        wait_for(lambda: pushed(server, second), timeout=90)
        assert server.dripped_abandoned >= 2
    finally:
        d.stop()
    assert not (root / ".kbsync" / "sync.lock").exists()
    log = d.stderr()
    assert "after its deadline" not in log and "past its deadline of" not in log  # no job was abandoned
    assert "Traceback" not in log

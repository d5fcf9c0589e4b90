"""A real server on a real workspace for the API's tests: one per module (starting one costs about half a
second), each test using ids of its own."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from helpers.web import WebServer, configure


def bare_remote(tmp: Path, root: Path) -> Path:
    """A bare repository as the workspace's `origin`."""
    remote = tmp / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    subprocess.run(["git", "-C", str(root), "remote", "add", "origin", str(remote)], check=True)
    return remote


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An initialised workspace configured for a server on any free port (a test starting its own)."""
    from kbsync.app.workspace import init_workspace

    ws = tmp_path / "ws"
    init_workspace(ws)
    configure(ws)
    return ws


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, home: Path) -> Iterator[WebServer]:
    from kbsync.app.workspace import init_workspace

    tmp = tmp_path_factory.mktemp("web")
    root = tmp / "ws"
    init_workspace(root)
    configure(root)
    bare_remote(tmp, root)
    srv = WebServer(root, home)
    yield srv
    srv.kill()

"""Shared fixtures: a git identity for real repositories, the command line (`cli` in this process, `cli_process`
as a subprocess), fresh workspaces, and the check that a test leaves no thread running."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from helpers.cli import Cli, kbsync, main_call
from helpers.threads import BROWSER_THREADS, PROCESS_THREADS, no_thread_leaks

LEAK_GRACE = 5.0  # seconds a test's threads have, after it, to end


@pytest.fixture(autouse=True)
def _git_identity(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Real git in tests, with an identity and no user or system config leaking in."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{var}_NAME", "kbsync test")
        monkeypatch.setenv(f"GIT_{var}_EMAIL", "test@kbsync.invalid")
    monkeypatch.delenv("KBSYNC_WORKSPACE", raising=False)


@pytest.fixture(autouse=True)
def _no_thread_leaks(request: pytest.FixtureRequest) -> Iterator[None]:
    """Each test fails when it leaves behind a non-daemon thread it started (helpers/threads.py)."""
    allowed = PROCESS_THREADS + (BROWSER_THREADS if "browser" in request.fixturenames else ())
    with no_thread_leaks(LEAK_GRACE, allowed):
        yield


@pytest.fixture(scope="session")
def cli() -> Cli:
    """The command line, `kbsync.main.main(argv)` in this process: `cli(*args, ws=..., stdin=..., env=..., cwd=...)`."""
    return main_call


@pytest.fixture(scope="session")
def cli_process() -> Cli:
    """The real command line as a subprocess, for start-up, exit codes, servers and calls that may hang."""
    return kbsync


@pytest.fixture
def ws_root(tmp_path: Path) -> Iterator[Path]:
    """An initialised, empty workspace."""
    from kbsync.app.workspace import init_workspace

    root = tmp_path / "ws"
    init_workspace(root)
    yield root

"""Shared fixtures: a git identity for real repositories, and fresh workspaces."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest
from helpers_core import kbsync as run_kbsync

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("KBSYNC_SHARED", REPO.parent / "shared"))
GEN_WORKSPACE = SHARED / "bench" / "gen_workspace.py"


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


@pytest.fixture
def ws_root(tmp_path: Path) -> Iterator[Path]:
    """An initialised, empty workspace."""
    from kbsync.app.workspace import init_workspace

    root = tmp_path / "ws"
    init_workspace(root)
    yield root


def kbsync(*args: str, input: str | None = None, cwd: Path | None = None,
           env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run the real command line: `python -m kbsync ARGS`."""
    return run_kbsync(*args, stdin=input, cwd=cwd, env=env, timeout=timeout)


def gen_workspace(out: Path, sessions: int, dirty: float = 0.0, seed: int = 7) -> Path:
    """The shared benchmark corpus generator, run for real."""
    if not GEN_WORKSPACE.exists():
        pytest.skip(f"corpus generator not found at {GEN_WORKSPACE}; set KBSYNC_SHARED")
    subprocess.run([sys.executable, str(GEN_WORKSPACE), str(out), "--sessions", str(sessions),
                    "--dirty", str(dirty), "--seed", str(seed)], check=True, capture_output=True)
    return out

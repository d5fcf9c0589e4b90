"""The one helper through which kbsync runs external programs."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Sequence

from kbsync.errors import GitError, KbsyncError


def run(
    cmd: Sequence[str],
    *,
    cwd: Path | str | None = None,
    input: bytes | None = None,
    check: bool = True,
    timeout: float | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run `cmd`, capturing output; a failure raises GitError (for git) or KbsyncError."""
    try:
        proc = subprocess.run(
            list(cmd), cwd=cwd, input=input, capture_output=True, timeout=timeout, env=env, check=False
        )
    except FileNotFoundError as exc:
        raise KbsyncError(f"{cmd[0]} is not installed; install it and try again") from exc
    except subprocess.TimeoutExpired as exc:
        raise KbsyncError(f"{' '.join(cmd[:3])} did not finish within {timeout} s") from exc
    if check and proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = err[-1] if err else f"exit {proc.returncode}"
        cls = GitError if cmd[0] == "git" else KbsyncError
        raise cls(f"`{' '.join(cmd[:3])}` failed: {detail}")
    return proc


def git(args: Sequence[str], cwd: Path | str, **kw: object) -> str:
    """`git ARGS` in `cwd`; its standard output as text."""
    proc = run(["git", *args], cwd=cwd, **kw)  # type: ignore[arg-type]
    return proc.stdout.decode("utf-8", "replace")

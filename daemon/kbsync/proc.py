"""The one helper through which kbsync runs external programs."""

from __future__ import annotations

import os
import signal
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
    """Run `cmd`, capturing output; a failure raises GitError (for git) or KbsyncError.

    The program runs in its own process group; on a timeout the whole group is
    killed, so a wrapper's children cannot keep it alive.
    """
    try:
        child = subprocess.Popen(list(cmd), cwd=cwd, env=env, stdin=subprocess.PIPE if input is not None else
                                 subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 start_new_session=True)
    except FileNotFoundError as exc:
        raise KbsyncError(f"{cmd[0]} is not installed; install it and try again") from exc
    except OSError as exc:
        raise KbsyncError(f"cannot run {cmd[0]} ({exc.strerror}); check the command") from exc
    try:
        out, err = child.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        raise KbsyncError(f"`{' '.join(cmd[:3])}` timed out after {timeout:g} s; it was stopped") from None
    except BaseException:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
        raise
    proc = subprocess.CompletedProcess(list(cmd), child.returncode, out, err)
    if check and proc.returncode != 0:
        raise (GitError if cmd[0] == "git" else KbsyncError)(f"`{' '.join(cmd[:3])}` failed: {last_line(proc)}")
    return proc


def last_line(proc: subprocess.CompletedProcess[bytes]) -> str:
    """The last line of a finished program's error output, or its exit status."""
    err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    return err[-1] if err else f"exit status {proc.returncode}"


def git(args: Sequence[str], cwd: Path | str, **kw: object) -> str:
    """`git ARGS` in `cwd`; its standard output as text."""
    proc = run(["git", *args], cwd=cwd, **kw)  # type: ignore[arg-type]
    return proc.stdout.decode("utf-8", "replace")

"""The one helper through which kbsync runs external programs, and the time bounds every one of them obeys.

Each program runs in its own process group; at its time-out, or at the deadline its thread runs under
(`deadline`, which the daemon sets around every job), the whole group is killed, so a wrapper's children
cannot keep it alive. `kill_children` stops every program still running (the daemon's shutdown).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Iterator, Sequence

from kbsync.errors import GitError, KbsyncError, TimedOutError

_local = threading.local()  # .deadline: time.monotonic() by which this thread's work must end
_children: set[int] = set()  # process groups started and not yet reaped
_children_lock = threading.Lock()


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Within the block, on this thread, every program `run` starts and every bounded wait (`remaining`)
    ends at most `seconds` from now (or at an enclosing deadline, if that is sooner)."""
    previous: float | None = getattr(_local, "deadline", None)
    end = time.monotonic() + seconds
    _local.deadline = end if previous is None else min(previous, end)
    try:
        yield
    finally:
        _local.deadline = previous


def remaining(timeout: float | None) -> float | None:
    """`timeout` cut to what is left of this thread's deadline (None: no bound at all); TimedOutError when
    the deadline has passed."""
    end: float | None = getattr(_local, "deadline", None)
    if end is None:
        return timeout
    left = end - time.monotonic()
    if left <= 0:
        raise TimedOutError("the job's deadline passed; it was stopped and runs again at its next turn")
    return left if timeout is None else min(timeout, left)


def pause(seconds: float) -> None:
    """Sleep `seconds`, unless that would pass this thread's deadline: then TimedOutError at once (a wait
    that cannot end in time is not begun)."""
    left = remaining(None)
    if left is not None and seconds > left:
        raise TimedOutError(f"a wait of {seconds:.3g} s would pass the job's deadline; the job was stopped and "
                            "runs again at its next turn")
    time.sleep(seconds)


def kill_children() -> int:
    """Kill the process group of every program still running; how many there were."""
    with _children_lock:
        groups = list(_children)
    for pgid in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    return len(groups)


def run(
    cmd: Sequence[str],
    *,
    cwd: Path | str | None = None,
    input: bytes | None = None,
    check: bool = True,
    timeout: float | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run `cmd`, capturing output; a failure raises GitError (for git) or KbsyncError, a time-out (its own
    or the thread's deadline) TimedOutError after killing the program's whole process group."""
    bound = remaining(timeout)
    try:
        child = subprocess.Popen(list(cmd), cwd=cwd, env=env, stdin=subprocess.PIPE if input is not None else
                                 subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 start_new_session=True)
    except FileNotFoundError as exc:
        raise KbsyncError(f"{cmd[0]} is not installed; install it and try again") from exc
    except OSError as exc:
        raise KbsyncError(f"cannot run {cmd[0]} ({exc.strerror}); check the command") from exc
    with _children_lock:
        _children.add(child.pid)
    try:
        out, err = _communicate(child, input, bound, cmd)
    finally:
        with _children_lock:
            _children.discard(child.pid)
    proc = subprocess.CompletedProcess(list(cmd), child.returncode, out, err)
    if check and proc.returncode != 0:
        raise (GitError if cmd[0] == "git" else KbsyncError)(f"`{' '.join(cmd[:3])}` failed: {last_line(proc)}")
    return proc


def spawn(cmd: Sequence[str], *, pipes: bool = False, stderr: Path | None = None, inherit: bool = False,
          cwd: Path | str | None = None) -> subprocess.Popen[bytes]:
    """Start `cmd` in the background, in its own process group (which `kill_children` kills): with `pipes`
    its standard input and output are pipes to this process, with `inherit` this process's own, else
    nowhere; its error output goes to the file `stderr` (rewritten), else with `inherit` to this process's,
    else nowhere. `reaped` tells whether it has ended, and forgets it then."""
    err: Any = open(stderr, "wb") if stderr is not None else None if inherit else subprocess.DEVNULL
    stream = subprocess.PIPE if pipes else None if inherit else subprocess.DEVNULL
    try:
        child = subprocess.Popen(list(cmd), cwd=cwd, stdin=stream, stdout=stream, stderr=err,
                                 start_new_session=True)
    except OSError as exc:
        raise KbsyncError(f"cannot run {cmd[0]} ({exc.strerror}); check the installation") from exc
    finally:
        if stderr is not None:
            err.close()
    with _children_lock:
        _children.add(child.pid)
    return child


def reaped(child: subprocess.Popen[bytes]) -> bool:
    """Whether a program `spawn` started has ended (then it is reaped and forgotten)."""
    if child.poll() is None:
        return False
    with _children_lock:
        _children.discard(child.pid)
    return True


def stop(child: subprocess.Popen[bytes]) -> None:
    """Kill a program `spawn` started, with its process group, and reap it."""
    _kill(child)
    child.wait()
    reaped(child)


def _communicate(child: subprocess.Popen[bytes], input: bytes | None, bound: float | None,
                 cmd: Sequence[str]) -> tuple[bytes, bytes]:
    try:
        return child.communicate(input, timeout=bound)
    except subprocess.TimeoutExpired:
        _kill(child)
        child.communicate()
        raise TimedOutError(f"`{' '.join(cmd[:3])}` timed out after {bound:.3g} s; it was stopped") from None
    except BaseException:
        _kill(child)
        child.wait()
        raise


def _kill(child: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)


def last_line(proc: subprocess.CompletedProcess[bytes]) -> str:
    """The last line of a finished program's error output, or its exit status."""
    err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    return err[-1] if err else f"exit status {proc.returncode}"


def git(args: Sequence[str], cwd: Path | str, **kw: object) -> str:
    """`git ARGS` in `cwd`; its standard output as text."""
    proc = run(["git", *args], cwd=cwd, **kw)  # type: ignore[arg-type]
    return proc.stdout.decode("utf-8", "replace")

"""The two ways tests run the command line: `main_call`, `kbsync.main.main(argv)` in the test's own process
(the `cli` fixture: most tests, which look at what a command prints, returns and leaves behind), and
`kbsync`, `python -m kbsync` as a subprocess (the `cli_process` fixture: start-up, a process's exit code and
signals, commands that serve until stopped, and calls that a timeout must be able to end)."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Protocol


class Cli(Protocol):
    """What the `cli` and `cli_process` fixtures are: `cli(*args, ws=..., stdin=..., env=..., cwd=..., timeout=...)`."""

    def __call__(self, *args: str, ws: Path | None = None, stdin: str | bytes | None = None,
                 env: dict[str, str] | None = None, cwd: Path | None = None,
                 timeout: float = 120) -> subprocess.CompletedProcess[str]: ...


def kbsync(*args: str, ws: Path | None = None, stdin: str | bytes | None = None, env: dict[str, str] | None = None,
           cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run `python -m kbsync [-w ws] ARGS` and capture its text output. No KBSYNC_* variable of the test
    process leaks in; `env` adds to (or overrides) the inherited environment."""
    argv = [sys.executable, "-m", "kbsync"] + (["-w", str(ws)] if ws is not None else []) + list(args)
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("KBSYNC_")}
    full_env.update(env or {})
    data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    proc = subprocess.run(argv, input=data, capture_output=True, env=full_env, cwd=cwd, timeout=timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode,
                                       proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"))


_ONE_AT_A_TIME = threading.Lock()  # a call swaps the process's standard streams, environment and folder


def main_call(*args: str, ws: Path | None = None, stdin: str | bytes | None = None,
              env: dict[str, str] | None = None, cwd: Path | None = None,
              timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """What `kbsync` gives, from `kbsync.main.main(argv)` run in this process (as `python -m kbsync` runs it, the
    assistant's hook call included): the standard streams are buffers (stdin empty unless given, none of them
    a terminal), the environment is this process's less KBSYNC_* plus `env`, the folder `cwd`; each is put back
    afterwards, and so are the logging and progress set-up that main changes. `timeout` is not enforced here:
    a call that might hang belongs to `kbsync`."""
    argv = (["-w", str(ws)] if ws is not None else []) + list(args)
    data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin or b""
    with _ONE_AT_A_TIME, _streams(data) as (out, err), _environment(env or {}, cwd), _logging_kept():
        code = _run(argv)
        sys.stdout.flush()
        sys.stderr.flush()
        stdout, stderr = out.getvalue(), err.getvalue()
    return subprocess.CompletedProcess(["kbsync", *argv], code, stdout.decode("utf-8", "replace"),
                                       stderr.decode("utf-8", "replace"))


def _run(argv: list[str]) -> int:
    from kbsync.assist.hookrun import plain_hook_call
    from kbsync.main import main

    try:
        hook = plain_hook_call(argv)
        if hook:
            from kbsync.assist.hookrun import run

            return run(*hook)
        return main(argv)
    except SystemExit as exc:  # argparse's usage errors, --help and --version
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        sys.stderr.write(f"{exc.code}\n")
        return 1


@contextmanager
def _streams(stdin: bytes) -> Iterator[tuple[io.BytesIO, io.BytesIO]]:
    out, err = io.BytesIO(), io.BytesIO()
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", write_through=True)
    try:
        yield out, err
    finally:
        for stream in (sys.stdin, sys.stdout, sys.stderr):
            stream.detach()  # the buffers stay open for reading
        sys.stdin, sys.stdout, sys.stderr = saved


@contextmanager
def _environment(env: dict[str, str], cwd: Path | None) -> Iterator[None]:
    saved, here = dict(os.environ), os.getcwd()
    for name in [k for k in os.environ if k.startswith("KBSYNC_")]:
        del os.environ[name]
    os.environ.update(env)
    try:
        if cwd is not None:
            os.chdir(cwd)
        yield
    finally:
        os.chdir(here)
        os.environ.clear()
        os.environ.update(saved)


@contextmanager
def _logging_kept() -> Iterator[None]:
    from kbsync import progress
    from kbsync.main import CHATTY

    root = logging.getLogger()
    saved = root.handlers[:], root.level, [(logging.getLogger(n), logging.getLogger(n).level) for n in CHATTY]
    try:
        yield
    finally:
        root.handlers[:], root.level = saved[0], saved[1]
        for logger, level in saved[2]:
            logger.setLevel(level)
        progress.configure(enabled=True, terminal=False)  # the default: progress as log lines

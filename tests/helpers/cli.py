"""The one way tests run the real command line: `python -m kbsync` as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Protocol


class Cli(Protocol):
    """What the `cli` fixture is: `cli(*args, ws=..., stdin=..., env=..., cwd=..., timeout=...)`."""

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

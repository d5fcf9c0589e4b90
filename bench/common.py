"""Shared helpers for the benchmark scripts: corpus generation, timed child processes, medians.

The corpus comes from the project's own generator, bench/gen_workspace.py (see its docstring). To
take the figures on a corpus from another generator, set KBSYNC_GEN to that script's path: it must
take the same command line, `GEN OUT --sessions N --dirty R --seed S` (a relative path is taken from
the current folder). For example:

    KBSYNC_GEN=/path/to/other/gen_workspace.py python bench/bench_validate.py

Generated corpora are cached under the benchmark's output folder by their parameters and by a
digest of the generator script, so a corpus made by one generator is never reused for another.
"""

from __future__ import annotations

import compileall
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Sequence

REPO = Path(__file__).resolve().parent.parent
GEN = Path(os.environ.get("KBSYNC_GEN") or Path(__file__).resolve().parent / "gen_workspace.py")
KBSYNC = [sys.executable, "-m", "kbsync"]


def _compile_package() -> None:
    """Byte-compile kbsync once, as an installed package is: a timed `kbsync` process must not pay for
    compiling its modules again when the environment sets PYTHONDONTWRITEBYTECODE."""
    compileall.compile_dir(REPO / "daemon", quiet=1)


_compile_package()


def generator() -> Path:
    """The corpus generator script: bench/gen_workspace.py, or the one $KBSYNC_GEN names."""
    if not GEN.is_file():
        named = " (named by KBSYNC_GEN; unset it to use bench/gen_workspace.py)" if os.environ.get("KBSYNC_GEN") else ""
        sys.exit(f"bench: corpus generator not found at {GEN}{named}")
    return GEN


def corpus(out_root: Path, sessions: int, dirty: float = 0.0, seed: int = 7) -> Path:
    """A generated workspace, cached under `out_root` by its parameters and the generator's digest."""
    tag = hashlib.sha256(generator().read_bytes()).hexdigest()[:8]
    out = out_root / f"ws-{sessions}-{dirty}-{seed}-{tag}"
    if not (out / "index.md").exists():
        shutil.rmtree(out, ignore_errors=True)
        subprocess.run([sys.executable, str(GEN), str(out), "--sessions", str(sessions), "--dirty", str(dirty),
                        "--seed", str(seed)], check=True, stdout=subprocess.DEVNULL)
    return out


# A child's peak RSS (ru_maxrss) counts the memory of the process it was started from: the kernel carries the
# old address space's peak over at exec, and a vfork'd child's old address space is its parent's. Started from a
# benchmark that has grown (corpora read, searches run in process), `kbsync validate` showed 47 MB where it uses
# 23 MB. So `spawned` starts its children from this small launcher, forked from it: their peak is their own (or
# the launcher's 9 MB, below every figure taken).
_LAUNCHER = r"""
import json, os, sys, time
for line in sys.stdin:
    cmd, cwd = json.loads(line)
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            if cwd:
                os.chdir(cwd)
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    print(json.dumps([wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, os.waitstatus_to_exitcode(status)]),
          flush=True)
"""
_launcher: subprocess.Popen[str] | None = None
_launching = threading.Lock()


def spawned(cmd: list[str], cwd: Path | None = None) -> tuple[float, float, int, int]:
    """Wall seconds, CPU seconds (user and system, of the child and its waited-for children), peak RSS in MB of
    the child or its largest such child, and exit code; its output is discarded. One child at a time: callers
    in several threads wait their turn (`timed` runs children side by side)."""
    global _launcher
    with _launching:
        if _launcher is None or _launcher.poll() is not None:
            _launcher = subprocess.Popen([sys.executable, "-S", "-c", _LAUNCHER], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, text=True)
        assert _launcher.stdin is not None and _launcher.stdout is not None
        _launcher.stdin.write(json.dumps([cmd, str(cwd) if cwd else None]) + "\n")
        _launcher.stdin.flush()
        wall, cpu, maxrss, code = json.loads(_launcher.stdout.readline())
    return wall, cpu, _mb(maxrss), code


def timed(cmd: list[str], cwd: Path | None = None) -> tuple[float, int, int]:
    """Wall seconds, peak RSS in MB and exit code of one child process, started from this process (so its RSS
    figure counts this process's peak: use `spawned` for a memory figure); safe to call from several threads at
    once, each child running beside the others."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, _mb(usage.ru_maxrss), os.waitstatus_to_exitcode(status)


def _mb(maxrss: int) -> int:
    return maxrss // 1024 if sys.platform != "darwin" else maxrss // (1024 * 1024)


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def percentile(values: Sequence[float], q: float) -> float:
    """The value at quantile `q` (0.5 is the median) of `values`, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def need(tool: str) -> str:
    path = shutil.which(tool)
    if not path:
        sys.exit(f"bench: {tool} is not installed (Debian package: {'ripgrep' if tool == 'rg' else tool})")
    return path


__all__ = ["corpus", "generator", "spawned", "timed", "median", "percentile", "need", "GEN", "KBSYNC", "resource"]

"""Shared helpers for the benchmark scripts: corpus generation, timed child processes, medians."""

from __future__ import annotations

import compileall
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("KBSYNC_SHARED", REPO.parent / "shared"))
GEN = SHARED / "bench" / "gen_workspace.py"
KBSYNC = [sys.executable, "-m", "kbsync"]


def _compile_package() -> None:
    """Byte-compile kbsync once, as an installed package is: a timed `kbsync` process must not pay for
    compiling its modules again when the environment sets PYTHONDONTWRITEBYTECODE."""
    compileall.compile_dir(REPO / "daemon", quiet=1)


_compile_package()


def corpus(out_root: Path, sessions: int, dirty: float = 0.0, seed: int = 7) -> Path:
    """A generated workspace, cached by its parameters under `out_root`."""
    out = out_root / f"ws-{sessions}-{dirty}-{seed}"
    if not (out / "index.md").exists():
        shutil.rmtree(out, ignore_errors=True)
        subprocess.run([sys.executable, str(GEN), str(out), "--sessions", str(sessions), "--dirty", str(dirty),
                        "--seed", str(seed)], check=True, stdout=subprocess.DEVNULL)
    return out


def timed(cmd: list[str], cwd: Path | None = None) -> tuple[float, int, int]:
    """Wall seconds, peak RSS in MB and exit code of one child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    rss_mb = usage.ru_maxrss // 1024 if sys.platform != "darwin" else usage.ru_maxrss // (1024 * 1024)
    return wall, rss_mb, os.waitstatus_to_exitcode(status)


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


__all__ = ["corpus", "timed", "median", "percentile", "need", "KBSYNC", "resource"]

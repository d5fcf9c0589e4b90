"""Benchmark: start-up of `kbsync --version` and the pre-commit hook on 100 staged files, this checkout
against another installed kbsync in the same run.

    python bench/bench_startup.py [--against PYTHON] [--runs 15] [--sessions 300]

PYTHON is an interpreter that has another kbsync installed (for example a virtual environment made
from an older checkout). The two are timed in turns, one run each per round, so that whatever else
the machine is doing falls on both alike. Prints the median wall time and the median CPU time
(user + system of the child process; less sensitive to a busy machine than wall time) of each.
Without --against, only this checkout is timed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import corpus, median


def timed_cpu(cmd: list[str], cwd: Path | None = None) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one child process, which must succeed."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"bench: {' '.join(cmd)} exited {code} in {cwd}")
    return wall, usage.ru_utime + usage.ru_stime


def staged_repo(ws: Path, dest: Path, files: int) -> Path:
    """A git repository with `files` session files of the corpus staged and nothing committed."""
    dest.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=dest, check=True)
    for src in sorted((ws / "sessions").rglob("*.md"))[:files]:
        target = dest / src.relative_to(ws)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
    subprocess.run(["git", "add", "-A"], cwd=dest, check=True)
    return dest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", metavar="PYTHON", help="an interpreter with another kbsync installed")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--sessions", type=int, default=300)
    args = ap.parse_args()
    sides = {"this checkout": sys.executable, **({"against": args.against} if args.against else {})}
    with tempfile.TemporaryDirectory(prefix="kbsync-bench-startup-") as tmp:
        work = Path(tmp)
        repo = staged_repo(corpus(work, args.sessions), work / "repo", 100)
        commands = {"kbsync --version": (["--version"], None), "hook pre-commit, 100 staged files":
                    (["hook", "pre-commit", "--no-fix"], repo)}
        for label, (argv, cwd) in commands.items():
            times: dict[str, list[tuple[float, float]]] = {side: [] for side in sides}
            for _ in range(args.runs):
                for side, python in sides.items():
                    times[side].append(timed_cpu([python, "-m", "kbsync", *argv], cwd=cwd))
            for side, got in times.items():
                print(f"{label:<36} {side:<14} wall {median([w for w, _ in got]):.3f} s   "
                      f"cpu {median([c for _, c in got]):.3f} s   (median of {args.runs})")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Wall time of `kbsync scan` over a folder source of N files: the first scan, then incremental ones.

    python bench/bench_scan.py [--files 10000] [--new 50] [--runs 3]

The source is the sessions/ folder of a generated corpus (bench/gen_workspace.py, or the generator
$KBSYNC_GEN names: see bench/common.py). First scan: no watermark, every file becomes a candidate (hashing,
instruction and secret checks of every file). Incremental: `--new` files added, the rest
untouched (stat only). Reference tools in the same run: `rg --files` (the walk alone) and
`rg -l` of an English injection phrase over every file (reading everything once).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
from pathlib import Path

from common import KBSYNC, corpus, median, need, timed

CPU: list[float] = []  # CPU seconds (user + system) of each scan, in the order run


def run_scan(ws: Path) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, _rss, code = timed([*KBSYNC, "-w", str(ws), "scan"])
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if code != 0:
        sys.exit(f"bench: kbsync scan exited {code}")
    CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall


def fresh_workspace(tmp: Path, source: Path) -> Path:
    ws = tmp / "ws"
    shutil.rmtree(ws, ignore_errors=True)
    (ws / ".kbsync").mkdir(parents=True)
    (ws / ".kbsync" / "config.toml").write_text(f'[[scan.sources]]\nname = "corpus"\npath = "{source}"\n',
                                                encoding="utf-8")
    return ws


def add_new(source: Path, run: int, n: int) -> None:
    folder = source / f"new-{run}"
    folder.mkdir()
    for i in range(n):
        (folder / f"note-{i}.md").write_text(f"# 新笔记 {run}-{i}\n\n发布前检查锁文件，第 {i} 条。\n", encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--files", type=int, default=10000)
    ap.add_argument("--new", type=int, default=50)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    rg = need("rg")
    with tempfile.TemporaryDirectory(prefix="kbsync-bench-scan-") as t:
        tmp = Path(t)
        source = tmp / "source"
        shutil.copytree(corpus(tmp, args.files) / "sessions", source)
        count = sum(1 for _ in source.rglob("*.md"))
        firsts = [run_scan(fresh_workspace(tmp, source)) for _ in range(args.runs)]
        print(f"first scan, {count} files: median {median(firsts):.2f} s wall, {median(CPU):.2f} s CPU over {args.runs} "
              f"runs (load average {os.getloadavg()[0]:.1f})")
        ws = fresh_workspace(tmp, source)
        run_scan(ws)
        nothing = [run_scan(ws) for _ in range(args.runs)]
        print(f"incremental scan, nothing new: median {median(nothing):.2f} s")
        incs = []
        for run in range(args.runs):
            add_new(source, run, args.new)
            incs.append(run_scan(ws))
        print(f"incremental scan, {args.new} new of {count + args.new * args.runs}: median {median(incs):.2f} s")
        walk = median([timed([rg, "--files", str(source)])[0] for _ in range(args.runs)])
        grep = median([timed([rg, "-l", "-i", "ignore (all )?previous instructions", str(source)])[0]
                       for _ in range(args.runs)])
        print(f"reference: rg --files {walk:.2f} s; rg -l over every file {grep:.2f} s")
        floor = median([timed([sys.executable, "-c", "pass"])[0] for _ in range(args.runs)])
        print(f"reference: python start-up {floor:.2f} s")


if __name__ == "__main__":
    main()

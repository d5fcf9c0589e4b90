#!/usr/bin/env python3
"""The answering path of a serving process, in process: what `kbsync mcp` does for get_context and status,
without the transport, so that the server's own background work (the index's catch-up) shows in the figures.

    python bench/bench_serving.py [--sessions 12000] [--packs 100] [--rounds 2] [--workspace DIR] [--also TREE]

In a fresh process per tree and round (rounds alternate between the trees), the workspace is opened as
`kbsync mcp` opens it (kbsync.app.catchup.start, when the tree has it), one pack is made, and after 2.1 s
`--packs` packs follow back to back (every other one with a tag filter, the tasks bench_mcp.py uses), then
10 status reports, each inside `answering` as a tool call is. Printed per run: wall p50 and p95 and the
answering thread's CPU p50 and p95 of the packs; the whole process's CPU over the packs (a catch-up on
another thread of the process counts there); status wall p50, p95 and first, and its CPU p50 and first; the
load average before and after. The CPU figures move far less with the machine's load than the wall ones.

The generated corpus of --sessions (bench/common.py) is copied once per tree and its index built by that
tree (an older tree's index layout differs). --workspace (and --also-workspace for --also's tree) name a
workspace to use as it is instead: the packs and reports only read it, and its index is built first only
where it is missing or of another layout.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from common import KBSYNC, corpus  # noqa: E402

CHILD = r"""
import contextlib, os, statistics, sys, time
from kbsync.app.workspace import open_workspace
from kbsync.app.retrieval import build_context
from kbsync.app.status import report
ws = open_workspace(sys.argv[1], None)
try:
    from kbsync.app import catchup
except ImportError:  # a tree from before the catch-up moved off the answering path
    answering = contextlib.nullcontext
else:
    catchup.start(ws)
    answering = catchup.answering
TASKS = ["检查发布前的锁文件问题", "review the contract's payment terms before signing", "数据库迁移的回滚方案",
         "why did the deploy pipeline fail last week?"]
def p95(xs):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(0.95 * (len(xs) - 1)))]
def timed(n, call):
    wall, cpu = [], []
    for i in range(n):
        w, c = time.perf_counter(), time.thread_time()
        with answering():
            call(i)
        wall.append((time.perf_counter() - w) * 1000)
        cpu.append((time.thread_time() - c) * 1000)
    return wall, cpu
load0 = os.getloadavg()[0]
build_context(ws, TASKS[0], [])
time.sleep(2.1)
began = time.process_time()
wall, cpu = timed(int(sys.argv[2]), lambda i: build_context(ws, TASKS[i % 4], ["deploy"] if i % 2 else []))
spent = time.process_time() - began
swall, scpu = timed(10, lambda i: report(ws).as_dict())
print(f"get_context wall p50 {statistics.median(wall):.1f} ms, p95 {p95(wall):.1f}; CPU p50 {statistics.median(cpu):.1f},"
      f" p95 {p95(cpu):.1f}; process CPU over the packs {spent:.2f} s | status wall p50 {statistics.median(swall):.1f},"
      f" p95 {p95(swall):.1f}, first {swall[0]:.0f}; CPU p50 {statistics.median(scpu):.1f}, first {scpu[0]:.0f}"
      f" | load {load0:.1f} -> {os.getloadavg()[0]:.1f}")
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--sessions", type=int, default=12000)
    ap.add_argument("--packs", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--workspace", type=Path, help="a workspace to use as it is, for this tree")
    ap.add_argument("--also", type=Path, metavar="TREE", help="also time the kbsync of this source tree")
    ap.add_argument("--also-workspace", type=Path, help="a workspace to use as it is, for --also's tree")
    args = ap.parse_args()
    trees: list[tuple[str, Path, Path | None]] = [("this", REPO, args.workspace)]
    if args.also:
        trees.append((args.also.name, args.also.resolve(), args.also_workspace))
    with tempfile.TemporaryDirectory() as tmp:
        copies = {}
        for name, tree, given in trees:
            env = {**os.environ, "PYTHONPATH": str(tree / "daemon")}
            ws = given or Path(tmp) / name
            if given is None:
                shutil.copytree(corpus(REPO / "bench" / "out", args.sessions), ws, symlinks=True)
                subprocess.run([*KBSYNC, "-w", str(ws), "index", "rebuild", "--search"], check=True,
                               stdout=subprocess.DEVNULL, env=env)
            copies[name] = (ws, env)
        for _ in range(args.rounds):
            for name, _tree, _given in trees:
                ws, env = copies[name]
                out = subprocess.run([sys.executable, "-c", CHILD, str(ws), str(args.packs)], check=True,
                                     capture_output=True, text=True, env=env).stdout
                print(f"[{name}] {out.strip()}", flush=True)


if __name__ == "__main__":
    main()

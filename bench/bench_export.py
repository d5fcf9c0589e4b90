#!/usr/bin/env python3
"""Figures for export, section writes and split, with reference tools timed in the same run.

    python bench/bench_export.py [--files 50] [--runs 3]

Export: `kbsync export` of N generated sessions in one call, HTML and DOCX, against
pandoc run once per file (the same job) and once over all files (a lower bound).
Section writes: one `kbsync session section --append` call, against a bare
`python -c pass` (the interpreter's start-up, the floor of any CLI call).
Split: `kbsync session split` of a ~300 KB session with 40 topics.
The corpus comes from bench/gen_workspace.py (or the generator $KBSYNC_GEN names), via bench/common.py.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from common import KBSYNC, corpus, median


def median_s(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return median(times)


def run(argv: list[str], stdin: str | None = None) -> str:
    return subprocess.run(argv, input=stdin, text=True, check=True, capture_output=True).stdout


def sessions(tmp: Path, files: int) -> list[Path]:
    return sorted((corpus(tmp, files) / "sessions").rglob("*.md"))[:files]


def bench_export(tmp: Path, files: list[Path], runs: int) -> None:
    out = tmp / "out"
    names = [str(f) for f in files]
    pandoc = shutil.which("pandoc")
    for fmt in ("html", "docx"):
        t = median_s(lambda: run([*KBSYNC, "export", *names, "--to", fmt, "--out", str(out)]), runs)
        print(f"export --to {fmt}: {len(files)} sessions in one call: {t:.2f} s ({t / len(files) * 1000:.0f} ms/file)")
        if not pandoc:
            print("  pandoc not installed: no reference figure")
            continue
        args = ["-f", "commonmark", "-t", fmt] + (["-s"] if fmt == "html" else [])
        t = median_s(lambda: [run([pandoc, *args, n, "-o", str(out / f"p.{fmt}")]) for n in names], runs)
        print(f"  pandoc, one call per file: {t:.2f} s ({t / len(files) * 1000:.0f} ms/file)")
        t = median_s(lambda: run([pandoc, *args, *names, "-o", str(out / f"all.{fmt}")]), runs)
        print(f"  pandoc, all files in one call (one output): {t:.2f} s")


def big_session(ws: Path) -> str:
    topics = "\n\n".join(f"### 话题 {n}\n" + ("付款 条款 违约 确认 " * 180) for n in range(40))
    payload = {"session_id": "bench-big", "ts": "2025-06-11T14:32:07+08:00", "summary": "big",
               "sections": {"我的判断": topics, "结论": "结论"}}
    record = run([*KBSYNC, "-w", str(ws), "session", "save", "--json"], json.dumps(payload, ensure_ascii=False))
    return str(json.loads(record)["id"])


def bench_writes(tmp: Path, runs: int) -> None:
    ws = tmp / "w"
    run([*KBSYNC, "-w", str(ws), "init"])
    sid = big_session(ws)
    size = sum(p.stat().st_size for p in (ws / "sessions").rglob("*.md")) // 1024
    floor = median_s(lambda: run([sys.executable, "-c", "pass"]), runs * 3)
    t = median_s(lambda: run([*KBSYNC, "-w", str(ws), "session", "section", sid, "待办", "--append"], "- 一项"), runs * 3)
    print(f"session section --append on a {size} KB session: {t * 1000:.0f} ms per call "
          f"(python -c pass: {floor * 1000:.0f} ms)")
    times = []
    for n in range(runs):
        copy = tmp / f"s{n}"
        shutil.copytree(ws, copy)
        times.append(median_s(lambda: run([*KBSYNC, "-w", str(copy), "session", "split", sid]), 1))
    print(f"session split of that session into 40 children: {median(times) * 1000:.0f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=50)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        bench_export(tmp, sessions(tmp, args.files), args.runs)
        bench_writes(tmp, args.runs)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""kbsync at scale: validate, the search index and the daemon's restart, with rg and plain git in the same run.

    python bench/bench_scale.py [--sizes 12000 48000 100000] [--runs 3] [--out DIR] [--keep]

Per size, on a corpus from bench/gen_workspace.py made once under --out (a temporary folder by default,
deleted at the end unless --keep; 100,000 sessions take about 1 GB), prints one line per figure with the
load average (`uptime`) beside it:

- `kbsync -q validate` over the whole workspace (a new process each run; with `-q` no progress is shown,
  so the files are not counted first): median wall and CPU seconds (user + system, of the command and its
  worker processes), peak RSS of any one process; `rg -l '^status:' sessions` in the same runs and the
  ratio; `git status --porcelain` as plain git's reference;
- one core's speed, to compare machines by: the embedded-instruction check (most of a rebuild's CPU) over
  2,000 of the corpus's sessions in this process, in MB/s of CPU;
- `kbsync index rebuild --search`: wall and CPU seconds (and CPU a session) and RSS, the database's size
  against `du -sb sessions`;
- search in process (kbsync.retrieval.search.federated, bench_search's query set): p50 and p95;
- the daemon's restart with every file unchanged since its last run (the last run's scan mark is taken as
  now, which is what a daemon that caught up and stopped leaves behind): seconds from start until nothing
  is pending, and its peak RSS;
- the restart after a `git pull` of 2,000 changed files (one in ten with a defect to repair), made while
  the daemon was stopped: seconds until nothing is pending and until each of 20 sampled files is found by
  the search index, every changed file valid afterwards, and the daemon's peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from common import KBSYNC, corpus, median, percentile, spawned

DEFECT = ("status: ", "status： ")
CHANGED = 2000
REFERENCE_FILES = 2000


def load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def bench_validate(ws: Path, runs: int) -> None:
    rows = [(spawned([*KBSYNC, "-q", "-w", str(ws), "validate"]), spawned(["rg", "-l", "^status:", "sessions"], cwd=ws),
             spawned(["git", "status", "--porcelain"], cwd=ws)) for _ in range(runs)]
    assert all(r[0][3] == 0 for r in rows), "validate found errors in a clean corpus"
    v, g, s = (median([r[i][0] for r in rows]) for i in range(3))
    cpu = median([r[0][1] for r in rows])
    print(f"  validate: {v:.2f} s wall, {cpu:.2f} s CPU, {max(r[0][2] for r in rows)} MB; rg {g:.3f} s "
          f"({v / g:.1f}x rg); git status {s:.2f} s  [{load()}]")


def bench_reference(ws: Path) -> None:
    """One core's speed at kbsync's own kind of work, to compare machines by: the embedded-instruction check
    (the larger part of a rebuild's CPU) over REFERENCE_FILES of the corpus's sessions, in this process."""
    from kbsync.core.detect import injection

    texts = [p.read_text(encoding="utf-8") for p in sorted((ws / "sessions").rglob("*.md"))[:REFERENCE_FILES]]
    injection.detect(texts[0])  # the rules' automata built before the timing
    cpu = time.process_time()
    for text in texts:
        injection.detect(text)
    cpu = time.process_time() - cpu
    size = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    print(f"  one core's reference: the detector over {len(texts)} sessions, {size:.1f} MB in {cpu:.2f} s CPU = "
          f"{size / cpu:.1f} MB/s  [{load()}]")


def bench_index(ws: Path, qs: list[str]) -> None:
    wall, cpu, mb, code = spawned([*KBSYNC, "-w", str(ws), "index", "rebuild", "--search"])
    assert code == 0, f"index rebuild exit {code}"
    from kbsync.retrieval import db

    db_bytes = db.db_path(ws / ".kbsync").stat().st_size
    text = int(subprocess.run(["du", "-sb", "sessions"], cwd=ws, capture_output=True, text=True).stdout.split()[0])
    files = sum(1 for _ in (ws / "sessions").rglob("*.md"))
    print(f"  index rebuild --search: {wall:.1f} s wall, {cpu:.1f} s CPU ({cpu / files * 1000:.2f} ms a session), "
          f"{mb} MB; database {db_bytes / 1e6:.0f} MB for {text / 1e6:.0f} MB of sessions ({db_bytes / text:.2f}x)  [{load()}]")
    from kbsync.retrieval import search
    from kbsync.store.workspace import Workspace

    w = Workspace(ws)
    times = []
    for q in qs:
        start = time.perf_counter()
        search.federated(w, q)
        times.append(time.perf_counter() - start)
    print(f"  search in process ({len(qs)} queries): p50 {percentile(times, 0.5) * 1000:.0f} ms, "
          f"p95 {percentile(times, 0.95) * 1000:.0f} ms  [{load()}]")


def status(ws: Path) -> dict[str, object]:
    try:
        data: dict[str, object] = json.loads((ws / ".kbsync" / "status.json").read_text(encoding="utf-8"))
        return data
    except (OSError, ValueError):
        return {}


def peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def until(cond: Callable[[], bool], timeout: float) -> float:
    start = time.perf_counter()
    while not cond():
        if time.perf_counter() - start > timeout:
            return float("inf")
        time.sleep(0.05)
    return time.perf_counter() - start


def daemon_run(ws: Path, tokens: list[str], timeout: float = 900) -> tuple[float, float, float]:
    """Start the daemon; seconds until nothing is pending, until every token is found by search, its peak RSS."""
    daemon = subprocess.Popen([*KBSYNC, "-w", str(ws), "run"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def settled() -> bool:
            st = status(ws)
            return st.get("pid") == daemon.pid and st.get("pending_count") == 0

        quiet = until(settled, timeout)
        found = until(lambda: all(found_by_search(ws, t) for t in tokens), timeout) + quiet if tokens else quiet
        return quiet, found, peak_mb(daemon.pid)
    finally:
        daemon.terminate()
        daemon.wait(60)


def found_by_search(ws: Path, token: str) -> bool:
    from kbsync.errors import KbsyncError
    from kbsync.retrieval import search
    from kbsync.store.workspace import Workspace

    try:
        return bool(search.federated(Workspace(ws), token).results)
    except KbsyncError:  # the database is locked by the daemon's update: not found yet
        return False


def mark_caught_up(ws: Path) -> None:
    """What a daemon that caught up and stopped leaves: its scan mark (now) in the status file."""
    path = ws / ".kbsync" / "status.json"
    data = status(ws)
    data.update({"last_scan_ns": time.time_ns(), "pid": 0, "pending_count": 0})
    path.write_text(json.dumps(data), encoding="utf-8")


def pull_changes(ws: Path, other: Path) -> tuple[list[Path], list[str]]:
    """Commit 2,000 changed sessions in a clone (one in ten with a defect) and `git pull` them into `ws`."""
    git(ws.parent, "clone", "-q", str(ws), str(other))
    every = sorted(other.glob("sessions/*/*.md"))
    files = every[:: max(1, len(every) // CHANGED)][:CHANGED]
    tokens = []
    for i, p in enumerate(files):
        text = p.read_text(encoding="utf-8")
        if i % 10 == 0:
            text = text.replace(*DEFECT, 1)
        token = f"scaletoken{i:05d}"
        tokens.append(token)
        p.write_text(text + f"\n{token} pulled line\n", encoding="utf-8")
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "2,000 changed sessions")
    start = time.perf_counter()
    git(ws, "pull", "-q", "--no-rebase", str(other), "HEAD")
    print(f"  git pull of {len(files)} changed files: {time.perf_counter() - start:.1f} s  [{load()}]")
    return [ws / p.relative_to(other) for p in files], tokens


def bench_daemon(ws: Path, out: Path) -> None:
    mark_caught_up(ws)
    time.sleep(2.5)  # past the daemon's mtime slack, so that only what changes after the mark is new
    quiet, _, mb = daemon_run(ws, [])
    print(f"  daemon restart, every file unchanged: settled in {quiet:.1f} s, peak RSS {mb:.0f} MB  [{load()}]")
    changed, tokens = pull_changes(ws, out / "other")
    sample = tokens[:: max(1, len(tokens) // 20)][:20]
    quiet, found, mb = daemon_run(ws, sample)
    found_json = subprocess.run([*KBSYNC, "-w", str(ws), "validate", "--json", *map(str, changed)],
                                capture_output=True, text=True).stdout
    bad = {f["path"] for f in json.loads(found_json) if f["level"] == "error"}
    print(f"  daemon restart after the pull: settled in {quiet:.1f} s, the 20 sampled files searchable at "
          f"{found:.1f} s, {len(changed) - len(bad)}/{len(changed)} changed files repaired-or-valid, "
          f"peak RSS {mb:.0f} MB  [{load()}]")


def prepare(src: Path, ws: Path) -> None:
    shutil.rmtree(ws, ignore_errors=True)
    shutil.copytree(src, ws)
    subprocess.run([*KBSYNC, "-w", str(ws), "init"], check=True, capture_output=True)
    git(ws, "config", "gc.auto", "0")  # a commit of 100,000 files starts git's packing in the background otherwise
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "corpus")
    git(ws, "gc", "-q")  # packed, as a clone is, before anything is timed (loose objects slow every pull and status)
    git(ws, "status", "--porcelain")  # a fresh copy: let git refresh its index once, untimed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[12000, 48000, 100000])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--keep", action="store_true", help="keep the generated corpora under --out")
    a = ap.parse_args()
    out = a.out or Path(tempfile.mkdtemp(prefix="kbsync-scale-"))
    from bench_search import queries

    qs = queries(a.queries)
    try:
        for n in a.sizes:
            print(f"{n} sessions (cores {os.cpu_count()}):", flush=True)
            ws = out / f"scale-{n}"
            prepare(corpus(out, n), ws)
            bench_reference(ws)
            bench_validate(ws, a.runs)
            bench_index(ws, qs)
            bench_daemon(ws, out / f"pull-{n}")
            shutil.rmtree(ws, ignore_errors=True)
            shutil.rmtree(out / f"pull-{n}", ignore_errors=True)
            sys.stdout.flush()
    finally:
        if not a.keep:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()

"""The daemon on a generated workspace: repair latency, idle cost, commit time against plain git, burst.

    python bench/bench_daemon.py [--sessions 12000] [--writes 200] [--idle 60] [--runs 5] [--burst 2000]

Prints:
 (a) latency from a file's last write to the repaired file on disk, p50 and p95 over --writes
     writes (one at a time), minus quiet_ms;
 (b) the daemon's CPU over --idle seconds of idleness (% of one core) and its resident memory;
 (c) an hourly commit of 100 changed files (kbsync.git.commit.commit_pending, in process, and
     `kbsync commit` as a new process) against `git add -A && git commit` on a copy of the same
     repository in the same run, medians of --runs;
 (d) the time for a burst of --burst new files (10% needing a repair) to settle: every file
     processed and nothing pending.
Also the first start's catch-up over the whole workspace (every file checked once, the search index built),
and the daemon's settled resident memory after that first start (an empty .kbsync) and after a restart.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import KBSYNC, corpus, median

QUIET_MS = 300
DEFECT = ("status: ", "status： ")


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, stdout=subprocess.DEVNULL)


def status(root: Path) -> dict[str, object]:
    try:
        data: dict[str, object] = json.loads((root / ".kbsync" / "status.json").read_text(encoding="utf-8"))
        return data
    except (OSError, ValueError):
        return {}


def wait(cond: object, timeout: float, step: float = 0.002) -> float:
    """Seconds until `cond()` holds (perf_counter), or exit if it never does."""
    start = time.perf_counter()
    while not cond():  # type: ignore[operator]
        if time.perf_counter() - start > timeout:
            sys.exit(f"bench: condition not met within {timeout} s")
        time.sleep(step)
    return time.perf_counter() - start


def settled(root: Path, after: float) -> bool:
    st = status(root)
    updated = (root / ".kbsync" / "status.json").stat().st_mtime if st else 0
    return bool(st) and st.get("pending_count") == 0 and updated > after


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def index_built(root: Path) -> bool:
    """The search index is in place and no build of it is under way (a build writes beside it, then swaps)."""
    state = root / ".kbsync"
    return (state / "search.sqlite").exists() and not any(state.glob("search.sqlite.*.tmp*"))


def settled_rss(pid: int, root: Path, steady_s: int = 10, limit_s: float = 300) -> float:
    """The process's resident MB once the search index is built and its RSS has stayed within 1 MB for
    `steady_s` one-second samples."""
    wait(lambda: index_built(root), limit_s, step=0.5)
    samples = [rss_mb(pid)]
    start = time.perf_counter()
    while time.perf_counter() - start < limit_s:
        time.sleep(1)
        samples.append(rss_mb(pid))
        last = samples[-steady_s:]
        if len(last) == steady_s and max(last) - min(last) < 1:
            break
    return samples[-1]


def start_daemon(ws: Path) -> tuple[subprocess.Popen[bytes], float]:
    """`kbsync run` started, and the seconds until its catch-up has settled."""
    daemon = subprocess.Popen([*KBSYNC, "-w", str(ws), "run"], stderr=subprocess.DEVNULL)
    started = time.time()
    return daemon, wait(lambda: (ws / ".kbsync" / "status.json").exists() and settled(ws, started), 900, step=0.1)


def stop_daemon(daemon: subprocess.Popen[bytes]) -> None:
    daemon.send_signal(signal.SIGTERM)
    daemon.wait(30)


def sessions_of(root: Path, n: int) -> list[Path]:
    return sorted(root.glob("sessions/*/*.md"))[:n]


def latency(root: Path, files: list[Path]) -> list[float]:
    out = []
    for path in files:
        clean = path.read_text(encoding="utf-8")
        if DEFECT[0] not in clean:
            continue
        path.write_text(clean.replace(*DEFECT, 1), encoding="utf-8")
        took = wait(lambda: DEFECT[1] not in path.read_text(encoding="utf-8"), 30)
        out.append(took * 1000 - QUIET_MS)
    return out


def idle(pid: int, seconds: float) -> tuple[float, float]:
    tick = os.sysconf("SC_CLK_TCK")
    before, start = cpu_ticks(pid), time.perf_counter()
    time.sleep(seconds)
    used = (cpu_ticks(pid) - before) / tick
    return 100 * used / (time.perf_counter() - start), rss_mb(pid)


def change(files: list[Path], stamp: str) -> None:
    old = time.time() - 5
    for path in files:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"\n追加 {stamp}\n")
        os.utime(path, (old, old))


def commit_round(ws: Path, ref: Path, files: list[Path], stamp: str) -> tuple[float, float, float]:
    """One round: the same 100 changes in both repositories; seconds for kbsync (in process, CLI) and git."""
    from kbsync.config import Config
    from kbsync.git.commit import commit_pending
    from kbsync.store.workspace import Workspace

    change(files, stamp + "a")
    start = time.perf_counter()
    result = commit_pending(Workspace(ws, Config()), reason="hourly")
    inproc = time.perf_counter() - start
    assert result.sha and len(result.committed) == len(files), result
    change(files, stamp + "b")
    start = time.perf_counter()
    subprocess.run([*KBSYNC, "-w", str(ws), "commit"], check=True, capture_output=True)
    cli = time.perf_counter() - start
    for path in files:
        twin = ref / path.relative_to(ws)
        shutil.copy2(path, twin)
    start = time.perf_counter()
    subprocess.run(f"git add -A && git commit -q -m {stamp}", shell=True, cwd=ref, check=True)
    plain = time.perf_counter() - start
    return inproc, cli, plain


def burst(root: Path, n: int) -> float:
    """Seconds from the first write of `n` new sessions until all are processed (the dirty ones repaired)."""
    from kbsync.core.protocol import session_relpath

    template = sessions_of(root, 1)[0].read_text(encoding="utf-8").split("\n", 3)[3]
    dirty: list[Path] = []
    start = time.perf_counter()
    for i in range(n):
        hhmm = f"{i // 60 % 24:02d}{i % 60:02d}"
        sid = f"20300101-{hhmm}-{i:07x}"
        text = f"---\nid: {sid}\nts: 2030-01-01T{hhmm[:2]}:{hhmm[2:]}:00+08:00\n{template}"
        path = root / session_relpath(sid, "burst")
        path.parent.mkdir(parents=True, exist_ok=True)
        if i % 10 == 0:
            text = text.replace(*DEFECT, 1)
            dirty.append(path)
        path.write_text(text, encoding="utf-8")
    written = time.time()

    def done() -> bool:
        return settled(root, written + QUIET_MS / 1000) and not any(
            DEFECT[1] in p.read_text(encoding="utf-8") for p in dirty)

    wait(done, 600, step=0.05)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=12000)
    ap.add_argument("--writes", type=int, default=200)
    ap.add_argument("--idle", type=float, default=60.0)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--burst", type=int, default=2000)
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "kbsync-bench")
    a = ap.parse_args()
    ws = a.out / "daemon-ws"
    shutil.rmtree(ws, ignore_errors=True)
    shutil.copytree(corpus(a.out, a.sessions), ws)
    subprocess.run([*KBSYNC, "-w", str(ws), "init"], check=True, capture_output=True)
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "corpus")
    print(f"workspace: {a.sessions} sessions, {sum(f.stat().st_size for f in ws.rglob('*.md')) / 1e6:.0f} MB")

    daemon, took = start_daemon(ws)
    try:
        print(f"first start, catch-up over every file: {took:.1f} s; settled RSS {settled_rss(daemon.pid, ws):.0f} MB")
        lat = latency(ws, sessions_of(ws, a.writes))
        q = statistics.quantiles(lat, n=20)
        print(f"(a) write -> repaired on disk, minus quiet_ms ({len(lat)} writes): "
              f"p50 {statistics.median(lat):.0f} ms, p95 {q[18]:.0f} ms")
        cpu, mem = idle(daemon.pid, a.idle)
        print(f"(b) idle {a.idle:.0f} s: CPU {cpu:.2f}% of one core, RSS {mem:.0f} MB")
        print(f"(d) burst of {a.burst} new files ({a.burst // 10} to repair) settled in {burst(ws, a.burst):.1f} s")
        print(f"    RSS after the burst: {rss_mb(daemon.pid):.0f} MB")
    finally:
        stop_daemon(daemon)
    daemon, took = start_daemon(ws)
    try:
        print(f"restart: settled in {took:.1f} s; settled RSS {settled_rss(daemon.pid, ws):.0f} MB")
    finally:
        stop_daemon(daemon)
    ref = a.out / "daemon-ref"
    shutil.rmtree(ref, ignore_errors=True)
    shutil.copytree(ws, ref, symlinks=True)
    git(ref, "status", "--porcelain")  # a copy has new inodes: let git refresh its index once, untimed
    files = sessions_of(ws, 100)
    rounds = [commit_round(ws, ref, files, f"r{i}") for i in range(a.runs)]
    inproc, cli, plain = (median([r[k] for r in rounds]) for k in range(3))
    print(f"(c) commit of 100 changed files, median of {a.runs}: kbsync {inproc * 1000:.0f} ms in process, "
          f"`kbsync commit` {cli * 1000:.0f} ms; `git add -A && git commit` {plain * 1000:.0f} ms; "
          f"ratio {inproc / plain:.2f}x (CLI {cli / plain:.2f}x)")


if __name__ == "__main__":
    main()

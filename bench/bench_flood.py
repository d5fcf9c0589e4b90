"""The local server's accept path under a flood of idle connections: the daemon (`kbsync run`) on a fresh
workspace, first idle, then with --idle connections held open that never send a byte (each one the server
closes is opened again at once, so the count stays up), in the same run.

    python bench/bench_flood.py [--idle 1000] [--requests 300] [--saves 8] [--rounds 3]

The idle and the flooded runs alternate for --rounds rounds (so that the machine's other load falls on both
alike); the figures are over all rounds. Prints, idle and flooded: p50/p95 of an authenticated GET /api/v1/status (one keep-alive client, sequential),
the median time from a saved session (POST /api/v1/sessions, status closed) to its commit, and the ratios of
flooded to idle (targets: status within 2x, the commit as without the flood); and the flood's own figures:
connections held, reopened per second, the daemon's open files at most, and the CPU the daemon spends on
the flood alone (10 s with no request, flooded against idle).
"""

from __future__ import annotations

import argparse
import errno
import os
import resource
import selectors
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from common import REPO, median, percentile

sys.path.insert(0, str(REPO / "tests"))

from helpers.web import WebServer, configure  # noqa: E402


class Flood:
    """`count` connections to 127.0.0.1:`port` that never send a byte, each reopened once the server closes it,
    until stopped."""

    def __init__(self, port: int, count: int) -> None:
        self.port, self.count = port, count
        self.selector = selectors.DefaultSelector()
        self.reopened = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="flood", daemon=True)

    def __enter__(self) -> Flood:
        for _ in range(self.count):
            self._open()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)
        for key in list(self.selector.get_map().values()):
            self.selector.unregister(key.fileobj)
            key.fileobj.close()  # type: ignore[union-attr]
        self.selector.close()

    def _open(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        if sock.connect_ex(("127.0.0.1", self.port)) not in (0, errno.EINPROGRESS):
            sock.close()
            return
        self.selector.register(sock, selectors.EVENT_READ)

    def _run(self) -> None:
        while not self._stop.is_set():
            for key, _ in self.selector.select(timeout=0.1):
                sock: socket.socket = key.fileobj  # type: ignore[assignment]
                self.selector.unregister(sock)
                sock.close()  # the server closed it (it sends nothing else): open another
                self.reopened += 1
                self._open()

    def held(self) -> int:
        return len(self.selector.get_map())


def cpu_share(pid: int, seconds: float = 10.0) -> float:
    """The share of one core `pid` used over the next `seconds`."""
    def used() -> float:
        fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    start = used()
    time.sleep(seconds)
    return (used() - start) / seconds


def open_files(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/fd").iterdir()))


def status_latencies(server: WebServer, total: int) -> list[float]:
    out = []
    for _ in range(total):
        start = time.perf_counter()
        r = server.call("GET", "/status")
        out.append(time.perf_counter() - start)
        if r.status_code != 200:
            raise SystemExit(f"GET /status answered {r.status_code}: {r.text[:200]}")
    return out


def committed(root: Path, relpath: str) -> bool:
    done = subprocess.run(["git", "-C", str(root), "cat-file", "-e", f"HEAD:{relpath}"], capture_output=True)
    return done.returncode == 0


def commit_times(server: WebServer, saves: int, timeout: float = 60.0) -> list[float]:
    """For each of `saves` sessions saved closed over the API, seconds from the answer to its commit."""
    out = []
    for _ in range(saves):
        r = server.call("POST", "/sessions", body={"session_id": uuid.uuid4().hex, "title": "flood bench",
                                                   "status": "closed", "sections": {"结论": "saved"}})
        if r.status_code not in (200, 201):
            raise SystemExit(f"POST /sessions answered {r.status_code}: {r.text[:200]}")
        start, relpath = time.perf_counter(), r.json()["path"]
        while not committed(server.root, relpath):
            if time.perf_counter() - start > timeout:
                raise SystemExit(f"{relpath} was not committed within {timeout:g} s")
            time.sleep(0.01)
        out.append(time.perf_counter() - start)
        time.sleep(0.2)
    return out


class Run:
    """The figures of one kind of run, gathered over the rounds."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.latencies: list[float] = []
        self.commits: list[float] = []

    def measure(self, server: WebServer, a: argparse.Namespace) -> None:
        self.latencies += status_latencies(server, a.requests)
        self.commits += commit_times(server, a.saves)

    def figures(self) -> tuple[float, float, float]:
        p50, p95, commit = percentile(self.latencies, 0.5), percentile(self.latencies, 0.95), median(self.commits)
        print(f"| {self.name} | {p50 * 1000:.1f} ms | {p95 * 1000:.1f} ms | {commit * 1000:.0f} ms |")
        return p50, p95, commit


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--idle", type=int, default=1000, help="idle connections held during the flooded run")
    p.add_argument("--requests", type=int, default=300, help="GET /status per run")
    p.add_argument("--saves", type=int, default=8, help="sessions saved and timed to their commit per run")
    p.add_argument("--rounds", type=int, default=3, help="idle and flooded runs, alternating")
    a = p.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, a.idle + 1024)), hard))

    from kbsync.app.workspace import init_workspace

    with tempfile.TemporaryDirectory(prefix="kbsync-flood-") as tmp:
        root = Path(tmp) / "ws"
        init_workspace(root)
        configure(root)
        server = WebServer(root, Path(tmp) / "home", command=("run",))
        try:
            time.sleep(2)  # the daemon's first catch-up
            status_latencies(server, 20)  # warm-up
            calm, busy = Run("idle"), Run(f"{a.idle} idle connections")
            most, rates, held = 0, [], []
            for _ in range(a.rounds):
                calm.measure(server, a)
                with Flood(server.port, a.idle) as flood:
                    deadline = time.monotonic() + 30
                    while open_files(server.proc.pid) < a.idle and time.monotonic() < deadline:
                        time.sleep(0.1)
                    most, started, reopened = max(most, open_files(server.proc.pid)), time.monotonic(), flood.reopened
                    busy.measure(server, a)
                    most = max(most, open_files(server.proc.pid))
                    rates.append((flood.reopened - reopened) / (time.monotonic() - started))
                    held.append(flood.held())
                time.sleep(6)  # the flood's last connections closed by the server
            print("| run | GET /status p50 | p95 | save to commit (median) |")
            print("| --- | --- | --- | --- |")
            idle, flooded = calm.figures(), busy.figures()
            quiet = cpu_share(server.proc.pid)
            with Flood(server.port, a.idle):
                time.sleep(3)
                loaded = cpu_share(server.proc.pid)
            print(f"\nratios flooded/idle: p50 {flooded[0] / idle[0]:.2f}x, p95 {flooded[1] / idle[1]:.2f}x "
                  f"(target within 2x), commit {flooded[2] / idle[2]:.2f}x (target 1x)")
            print(f"flood: {min(held)} connections kept open, {median(rates):.0f} reopened a second (closed by the server "
                  f"for no request head); the daemon held {most} open files at most; its CPU with no request: "
                  f"{quiet * 100:.1f}% of a core idle, {loaded * 100:.1f}% flooded")
        finally:
            server.stop()
        log = server.stderr()
        lines = [ln for ln in log.splitlines() if "kbsync.web.admission" in ln]
        print(f"the daemon's log: {len(lines)} line(s) about connections, "
              f"{log.count('Too many open files')} about running out of files")


if __name__ == "__main__":
    main()

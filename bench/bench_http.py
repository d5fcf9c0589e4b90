"""The local HTTP API against the command line: GET /search and POST /sessions over loopback with 1 and 16
clients, beside `kbsync search` and `kbsync session save` as a new process per call, in the same run, on the
12,000-session corpus served by the daemon (`kbsync run`); the daemon's memory with the server up; and the
fifty-client write load (saves, appends to one section, votes) for --load-seconds on a fresh workspace.

    python bench/bench_http.py [--sessions 12000] [--requests 200] [--processes 20] [--load-seconds 60] [--threads]

Prints requests/s and p50/p95 per row (and the daemon's CPU time per HTTP request), the throughput ratio of HTTP to process-per-call, the daemon's
resident memory (now and peak), and what the load run wrote and lost (nothing, or the test fails). With
--threads the daemon runs under bench/threadcpu.py and each HTTP row is followed by its CPU time per request
in each of the daemon's threads.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

import requests

import threadcpu
from common import KBSYNC, REPO, corpus, percentile, timed

sys.path.insert(0, str(REPO / "tests"))

from bench_search import queries  # noqa: E402

from helpers import webload  # noqa: E402
from helpers.web import WebServer, configure, server_env  # noqa: E402

Call = Callable[[requests.Session, int], int]  # one request (the n-th of its client); its status


def settled(root: Path, timeout: float = 900.0) -> None:
    """Wait until the daemon's first catch-up over the corpus is done (nothing pending, the index built)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            st = json.loads((root / ".kbsync" / "status.json").read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            st = {}
        if st.get("pending_count") == 0 and st.get("last_scan_ns") and (root / ".kbsync" / "search.sqlite").exists():
            return  # the search index is built beside the catch-up, on the job thread
        time.sleep(0.5)
    raise SystemExit("the daemon did not settle")


SETTLE_S = 7  # quiet seconds before measuring: longer than the daemon's worker naps (5 s) before it hands the
# files of its first catch-up to the search index job (which then checks each against the index just built)


def memory_mb(pid: int) -> tuple[float, float]:
    """Resident and peak resident memory of `pid`, MB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
        name, _, value = line.partition(":")
        fields[name] = value
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def over_http(call: Call, clients: int, total: int) -> tuple[float, list[float], set[int]]:
    """`total` calls shared by `clients` threads, each with its own keep-alive connection: requests/s,
    latencies, statuses."""
    latencies: list[float] = []
    statuses: set[int] = set()
    lock = threading.Lock()

    def client(k: int) -> None:
        http = requests.Session()
        for n in range(k, total, clients):
            start = time.perf_counter()
            status = call(http, n)
            took = time.perf_counter() - start
            with lock:
                latencies.append(took)
                statuses.add(status)
        http.close()

    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(client, range(clients)))
    return total / (time.perf_counter() - start), latencies, statuses


def per_process(argv: Callable[[int], list[str]], clients: int, total: int) -> tuple[float, list[float], set[int]]:
    """The same with a new `kbsync` process per call."""
    latencies: list[float] = []
    codes: set[int] = set()

    def one(n: int) -> None:
        wall, _rss, code = timed(argv(n))
        latencies.append(wall)
        codes.add(code)

    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(one, range(total)))
    return total / (time.perf_counter() - start), latencies, codes


def cpu_s(pid: int) -> float:
    """User and system CPU time `pid` has used, seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def row(name: str, clients: int, got: tuple[float, list[float], set[int]], cpu_ms: float | None = None) -> float:
    rate, lat, codes = got
    cpu = f"{cpu_ms:.1f} ms" if cpu_ms is not None else ""
    print(f"| {name} | {clients} | {rate:.1f} | {percentile(lat, 0.5) * 1000:.1f} ms | "
          f"{percentile(lat, 0.95) * 1000:.1f} ms | {cpu} | {sorted(codes)} |")
    return rate


def idle(pid: int, seconds: int = 1) -> None:
    """Wait until `pid` used under 0.05 s of CPU in each of `seconds` seconds in a row."""
    quiet = 0
    while quiet < seconds:
        mark = cpu_s(pid)
        time.sleep(1.0)
        quiet = quiet + 1 if cpu_s(pid) - mark < 0.05 else 0


THREADS: list[Path] = []  # with --threads: the file bench/threadcpu.py answers in


def served(server: WebServer, call: Call, clients: int, total: int) -> tuple[tuple[float, list[float], set[int]], float]:
    """`over_http`, and the daemon's CPU time per request meanwhile (its reaction to the writes included:
    it is read once the daemon has been idle for a second); with --threads, per thread too (printed)."""
    before = cpu_s(server.proc.pid)
    threads = threadcpu.read(THREADS[0]) if THREADS else {}
    got = over_http(call, clients, total)
    idle(server.proc.pid)
    if THREADS:
        after = threadcpu.read(THREADS[0])
        per = {name: (cpu - threads.get(name, 0.0)) / total * 1000 for name, cpu in after.items()}
        print("  threads, ms of CPU a request: " + ", ".join(f"{name} {ms:.2f}" for name, ms in
                                                         sorted(per.items(), key=lambda kv: -kv[1]) if ms >= 0.05))
    return got, (cpu_s(server.proc.pid) - before) / total * 1000


def compare(server: WebServer, root: Path, a: argparse.Namespace) -> None:
    head = {"Authorization": f"Bearer {server.token}"}
    qs = queries(100)
    stamp = int(time.time())

    def search(http: requests.Session, n: int) -> int:
        return http.get(f"{server.url}/api/v1/search", params={"q": qs[n % len(qs)]}, headers=head, timeout=60).status_code

    def save(tag: str) -> Call:
        def call(http: requests.Session, n: int) -> int:
            body = {"session_id": f"bench-{stamp}-{tag}-{n}", "title": "压测", "sections": {"结论": f"第 {n} 次"}}
            return http.post(f"{server.url}/api/v1/sessions", json=body, headers=head, timeout=60).status_code
        return call

    ws = ["-w", str(root)]
    print("| what | clients | requests/s | p50 | p95 | daemon CPU a request | statuses or exit codes |\n"
          "| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    rates: dict[str, float] = {}
    for clients in (1, 16):
        rates[f"search http {clients}"] = row("GET /api/v1/search", clients, *served(server, search, clients, a.requests))
        rates[f"search proc {clients}"] = row("`kbsync search` (a process a call)", clients, per_process(
            lambda n: [*KBSYNC, *ws, "search", *qs[n % len(qs)].split()], clients, a.processes))
        rates[f"save http {clients}"] = row("POST /api/v1/sessions", clients,
                                            *served(server, save(f"h{clients}"), clients, a.requests))
        rates[f"save proc {clients}"] = row("`kbsync session save` (a process a call)", clients, per_process(
            lambda n: ["sh", "-c", f"echo '{{\"session_id\": \"bench-{stamp}-p{clients}-{n}\"}}' | "
                       f"{' '.join(KBSYNC)} -w {root} session save"], clients, a.processes))
    for what in ("search", "save"):
        for clients in (1, 16):
            ratio = rates[f"{what} http {clients}"] / rates[f"{what} proc {clients}"]
            print(f"{what}, {clients} client(s): HTTP gives {ratio:.1f}x the throughput of a process a call")


def load(tmp: Path, seconds: float) -> None:
    from kbsync.app.workspace import init_workspace

    root = tmp / "load"
    init_workspace(root)
    configure(root)
    server = WebServer(root, tmp)
    try:
        start = time.perf_counter()
        out = webload.run(server, clients=50, seconds=seconds)
        took = time.perf_counter() - start
        lost = webload.lost(server, out)
    finally:
        server.stop()
    print(f"50 clients for {seconds:.0f} s ({took:.0f} s with the final requests): {len(out.saved)} sessions saved, "
          f"{len(out.appended)} appends to one section, {out.votes} votes; answers {dict(sorted(out.statuses.items()))};"
          f" lost or wrong: {len(lost)}")
    for problem in lost[:10]:
        print(f"  {problem}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=12000)
    ap.add_argument("--requests", type=int, default=200, help="HTTP requests per row")
    ap.add_argument("--processes", type=int, default=20, help="processes per row")
    ap.add_argument("--load-seconds", type=float, default=60.0)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "kbsync-bench")
    ap.add_argument("--threads", action="store_true", help="print the daemon's CPU time per request in each thread")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="kbsync-http-") as tmp_name:
        tmp = Path(tmp_name)
        root = tmp / "ws"
        shutil.copytree(corpus(a.cache, a.sessions), root, symlinks=True)
        configure(root)
        subprocess.run([*KBSYNC, "-w", str(root), "init"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([*KBSYNC, "-w", str(root), "commit"], check=True, stdout=subprocess.DEVNULL,
                       env=server_env(tmp))  # the daemon then finds nothing to commit while it is measured
        python: tuple[str, ...] = ()
        if a.threads:
            THREADS.append(tmp / "threads.json")
            os.environ["THREADCPU_OUT"] = str(THREADS[0])
            python = (str(Path(__file__).with_name("threadcpu.py")),)
        server = WebServer(root, tmp, command=("run",), python=python)
        try:
            settled(root)
            idle(server.proc.pid, seconds=SETTLE_S)
            rss, peak = memory_mb(server.proc.pid)
            print(f"daemon with the server up, {a.sessions} sessions, settled: {rss:.0f} MB resident (peak {peak:.0f} MB)")
            compare(server, root, a)
            rss, peak = memory_mb(server.proc.pid)
            print(f"daemon after the runs: {rss:.0f} MB resident (peak {peak:.0f} MB)")
        finally:
            server.stop(timeout=60)
        if a.load_seconds > 0:
            load(tmp, a.load_seconds)


if __name__ == "__main__":
    main()

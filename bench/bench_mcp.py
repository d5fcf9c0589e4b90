#!/usr/bin/env python3
"""MCP server benchmark: `kbsync mcp` driven over stdio by the MCP SDK's own client.

    python bench/bench_mcp.py [--sessions 12000] [--calls 200] [--starts 7] [--workspace DIR] [--many SECONDS]
                              [--also TREE]

Figures (targets in brackets): the round trip of a `search`, a `read` (of the first hit, a page of up to
40,000 characters) and a `save_session` tool call on the generated corpus, p50 and p95 [20 ms, 40 ms]; of a
`get_context` for a task sentence, every other one with a tag filter [p95 50 ms], and of `status` [100 ms],
each kind's first call beside them (the calls follow one another from the server's start, without a pause);
server start to first answer, from spawning the process to the answer to `initialize` and to the first
`search` call [0.5 s], once by the SDK's client and then as the
median of --starts fresh processes driven by plain JSON-RPC lines, beside the floors measured in the same
rounds (`python -c pass`, `python -c "import mcp.types"`, `python -c "import mcp.server"`, each spawn to
exit) and the load average before and after; the resident memory of the `kbsync mcp` process after the
calls [80 MB]. With --many, also the many-clients run for that many seconds on a fresh workspace: five
`kbsync mcp` processes, the real daemon and a command-line writer (tests/helpers/mcp_load.py), with what
was lost and every error seen. With --also TREE, the calls and the starts are timed for the kbsync of another
source tree too (TREE/daemon first on the server's PYTHONPATH, e.g. a `git worktree` of an earlier commit), in
the same run and rounds, each figure labelled with its tree.

The corpus comes from bench/gen_workspace.py (or $KBSYNC_GEN; see bench/common.py) and is copied, so the
saves do not change the cached one; its search index is built before the timing.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

import anyio  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402

from common import KBSYNC, corpus, percentile  # noqa: E402
from helpers.mcp import data, stdio_params  # noqa: E402

WORDS = ["合同", "部署", "锁文件", "风险", "发布", "数据库", "测试", "回滚", "contract", "deploy"]
TASKS = ["检查发布前的锁文件问题", "review the contract's payment terms before signing", "数据库迁移的回滚方案",
         "why did the deploy pipeline fail last week?"]  # get_context's tasks, as an assistant words them


def server_pid() -> int:
    """The `kbsync mcp` child of this process."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if int(stat[1]) == os.getpid() and b"mcp" in cmd:
                return int(entry)
    raise SystemExit("bench: the kbsync mcp process was not found")


def rss_mb(pid: int) -> tuple[float, float]:
    """Resident and peak resident memory of `pid`, in MB."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


async def timed_calls(n: int, call: Callable[[int], Awaitable[Any]]) -> list[float]:
    out = []
    for i in range(n):
        start = time.perf_counter()
        await call(i)
        out.append((time.perf_counter() - start) * 1000)
    return out


def server_params(ws: Path, tree: Path | None = None) -> StdioServerParameters:
    """`kbsync mcp` on `ws`: this tree's, or with `tree`'s package first on its path."""
    params = stdio_params(ws)
    return params if tree is None else params.model_copy(update={"env": {**(params.env or {}),
                                                                          "PYTHONPATH": str(tree / "daemon")}})


async def measure(ws: Path, calls: int, tree: Path | None = None) -> dict[str, Any]:
    before = load()
    began = time.perf_counter()
    label = tree.name if tree else "this"
    async with Client(server_params(ws, tree)) as client:
        ready = time.perf_counter() - began  # spawned, and the initialize request answered
        hits = data(await client.call_tool("search", {"query": "部署"}))
        first = time.perf_counter() - began
        search = await timed_calls(calls, lambda i: client.call_tool("search", {"query": WORDS[i % len(WORDS)]}))
        ref = hits["results"][0]["path"]
        read = await timed_calls(calls, lambda i: client.call_tool("read", {"ref": ref}))
        context = await timed_calls(calls, lambda i: client.call_tool("get_context", {
            "query": TASKS[i % len(TASKS)], "tags": ["deploy"] if i % 2 else []}))
        status = await timed_calls(max(1, calls // 10), lambda i: client.call_tool("status", {}))
        save = await timed_calls(calls, lambda i: client.call_tool("save_session", {"session": {
            "session_id": f"bench-{label}-{i}", "title": "基准", "tags": ["bench"], "summary": "基准会话",
            "sections": {"结论": f"第 {i} 次保存。"}}}))
        rss, peak = rss_mb(server_pid())
    return {"tree": label, "ready": ready, "first": first, "search": search, "read": read, "save": save, "rss": rss,
            "peak": peak, "get_context": context, "status": status, "load": f"{before}, after {load()}"}


def report(got: dict[str, Any]) -> None:
    print(f"[{got['tree']}] load average before the calls {got['load']}")
    print(f"[{got['tree']}] server start to first answer: {got['ready']:.3f} s to the initialize answer, "
          f"{got['first']:.3f} s to the first search answer  (target < 0.5 s)")
    for name, target in (("search", "targets < 20 ms, < 40 ms"), ("read", "targets < 20 ms, < 40 ms"),
                         ("save", "targets < 20 ms, < 40 ms"), ("get_context", "target <= 50 ms"),
                         ("status", "target <= 100 ms")):
        ms = got[name]
        print(f"{name:>11} round trip over stdio: p50 {statistics.median(ms):.1f} ms, p95 {percentile(ms, 0.95):.1f} ms"
              f" over {len(ms)} calls, the first {ms[0]:.1f} ms  ({target})")
    print(f"resident memory of kbsync mcp: {got['rss']:.1f} MB (peak {got['peak']:.1f} MB)  (target < 80 MB)")


OPENING = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}}
FIRST_CALL: list[dict[str, Any]] = [
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "部署"}}}]
FLOORS = {"python -c pass": "pass", 'python -c "import mcp.types"': "import mcp.types",
          'python -c "import mcp.server"': "import mcp.server"}


def _send(proc: subprocess.Popen[bytes], *messages: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
    proc.stdin.flush()


def _answer(proc: subprocess.Popen[bytes], rid: int) -> None:
    """Read the server's lines until the answer to request `rid`."""
    assert proc.stdout is not None
    while line := proc.stdout.readline():
        if json.loads(line).get("id") == rid:
            return
    raise SystemExit(f"bench: kbsync mcp stopped before answering request {rid}")


def cpu_s(pid: int) -> float:
    """User and system CPU seconds `pid` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_once(ws: Path, tree: Path | None = None) -> dict[str, float]:
    """Wall and CPU seconds from spawning `kbsync mcp` to the initialize answer and to the first search answer."""
    params = server_params(ws, tree)
    began = time.perf_counter()
    proc = subprocess.Popen([params.command, *params.args], env=params.env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        _send(proc, OPENING)
        _answer(proc, 1)
        got = {"initialize answer": time.perf_counter() - began, "initialize answer, CPU": cpu_s(proc.pid)}
        _send(proc, *FIRST_CALL)
        _answer(proc, 2)
        return {**got, "first search answer": time.perf_counter() - began, "first search answer, CPU": cpu_s(proc.pid)}
    finally:
        proc.communicate(timeout=30)  # end of input: the server stops


def floor(code: str) -> tuple[float, float]:
    """Wall and CPU seconds of `python -c CODE`, spawn to exit."""
    began = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code])
    _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, code
    return time.perf_counter() - began, usage.ru_utime + usage.ru_stime


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def starts(ws: Path, runs: int, also: Path | None = None) -> None:
    """Medians over `runs` rounds, each round a fresh process of every floor and of `kbsync mcp` (and of the one
    of `also`)."""
    before, got = load(), collections.defaultdict[str, list[float]](list)
    for _ in range(runs):
        for name, code in FLOORS.items():
            wall, cpu = floor(code)
            got[name].append(wall)
            got[f"{name}, CPU"].append(cpu)
        for tree in (None, also) if also else (None,):
            for name, secs in start_once(ws, tree).items():
                got[f"[{tree.name}] {name}" if tree else name].append(secs)
    print(f"start-up, medians of {runs} fresh processes (load average before {before}, after {load()}):")
    for name, values in got.items():
        print(f"  {name:<50} {statistics.median(values):.3f} s  (min {min(values):.3f}, max {max(values):.3f})")


def many(seconds: float) -> None:
    from helpers.daemon import DaemonProcess
    from helpers.mcp_load import lost, run_load, seed

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        subprocess.run([*KBSYNC, "-w", str(root), "init"], check=True, stdout=subprocess.DEVNULL)
        sid, shared = seed(root)
        daemon = DaemonProcess(root)
        try:
            tally = run_load(root, sid, clients=5, seconds=seconds)
        finally:
            daemon.stop()
        locked = [e for e in [*tally.errors, daemon.stderr()] if "database is locked" in e]
        print(f"many clients for {seconds:.0f} s (5 kbsync mcp, the daemon, a CLI writer): {len(tally.saved)} sessions "
              f"saved, {len(tally.appended)} section appends, {tally.votes} votes, {tally.reads} searches/packs; "
              f"lost {len(lost(root, shared, tally))}, errors {len(tally.errors)}, 'database is locked' {len(locked)}")
        for e in tally.errors[:10]:
            print(f"  error: {e}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--sessions", type=int, default=12000)
    ap.add_argument("--calls", type=int, default=200, help="tool calls timed by the SDK's client (0: none)")
    ap.add_argument("--starts", type=int, default=7, help="fresh processes timed to the first answers (0: none)")
    ap.add_argument("--workspace", type=Path, help="a generated workspace to copy instead of generating one")
    ap.add_argument("--many", type=float, metavar="SECONDS", help="also run the many-clients load this long")
    ap.add_argument("--also", type=Path, metavar="TREE", help="also time the kbsync of this source tree")
    args = ap.parse_args()
    source = args.workspace or corpus(REPO / "bench" / "out", args.sessions)
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        shutil.copytree(source, ws, symlinks=True)
        subprocess.run([*KBSYNC, "-w", str(ws), "index", "rebuild", "--search"], check=True, stdout=subprocess.DEVNULL)
        if args.calls:
            for tree in (None, args.also) if args.also else (None,):
                report(anyio.run(measure, ws, args.calls, tree))
        if args.starts:
            starts(ws, args.starts, args.also)
    if args.many:
        many(args.many)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The assistant's prompt hook: how long `kbsync assist hook claude-code UserPromptSubmit` takes from process
start to its answer, with the daemon running (the block comes from its local server) and without (the hook
opens the search index itself), on the generated corpus; beside the floor of a Python process that does
nothing, in the same run. With --locomo, how often the block holds an answer turn on LoCoMo.

    python bench/bench_assist.py [--sessions 12000] [--runs 40] [--locomo PATH/locomo10.json [--convs 0-4] [--semantic]]

Printed: p50 and p95 in ms of the hook (the event JSON on stdin, exactly as the assistant sends it, the
answer read to its end) for each case, the floor's, and each case's p50 over the floor's [target: p95 <=
150 ms with the daemon]; the CPU time (user and system) of the process, p50 and p95, less bent by other
jobs than the wall time; the block's median tokens; the load average when it started. With --locomo: each conversation its own workspace as
bench/bench_locomo.py builds them, every question of categories 1-4 given as the prompt, the share of
questions whose block holds an evidence turn's text [target >= 60%] and the block's median tokens [<= 600];
with --semantic each workspace's semantic index is built too (the search's semantic leg, and what the
instruction classifier flags withheld from the block).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import KBSYNC, REPO, corpus, percentile

sys.path.insert(0, str(REPO / "tests"))

from bench_http import SETTLE_S, idle, settled  # noqa: E402
from bench_search import queries  # noqa: E402

from helpers.web import WebServer, configure, server_env  # noqa: E402


def run(cmd: list[str], stdin: bytes, env: dict[str, str] | None = None) -> tuple[float, float, bytes, bytes]:
    """One process fed `stdin`: wall ms from its start to the end of its output, its CPU ms (user and system:
    less bent by other jobs on the machine than the wall time), its stdout and stderr (both small)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdin and proc.stdout and proc.stderr
    proc.stdin.write(stdin)
    proc.stdin.close()
    out = proc.stdout.read()
    wall = (time.perf_counter() - start) * 1000
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    for stream in (proc.stdout, proc.stderr):
        stream.close()
    return wall, (usage.ru_utime + usage.ru_stime) * 1000, out, err


def hook_ms(root: Path, prompt: str, env: dict[str, str]) -> tuple[float, float, str]:
    """One hook process: wall and CPU milliseconds, and its answer."""
    event = json.dumps({"session_id": "bench-assist", "transcript_path": "", "cwd": str(root),
                        "hook_event_name": "UserPromptSubmit", "prompt": prompt}, ensure_ascii=False)
    wall, cpu, out, err = run([*KBSYNC, "-w", str(root), "assist", "hook", "claude-code", "UserPromptSubmit"],
                              event.encode("utf-8"), env)
    if err:
        sys.exit(f"bench: the hook failed: {err.decode('utf-8', 'replace')}")
    return wall, cpu, out.decode("utf-8")


def floor_ms(runs: int) -> tuple[list[float], list[float]]:
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu, _, _ = run([sys.executable, "-c", "pass"], b"")
        walls.append(wall)
        cpus.append(cpu)
    return walls, cpus


def tokens_of(answer: str) -> int:
    from kbsync.app.retrieval import estimate_tokens

    if not answer.strip():
        return 0
    return estimate_tokens(json.loads(answer)["hookSpecificOutput"]["additionalContext"])


def measure(label: str, root: Path, prompts: list[str], env: dict[str, str], base: float) -> None:
    hook_ms(root, prompts[0], env)  # the first run warms the disk cache, as an assistant's first prompt did
    walls, cpus, used = [], [], []
    for prompt in prompts:
        wall, cpu, answer = hook_ms(root, prompt, env)
        walls.append(wall)
        cpus.append(cpu)
        used.append(tokens_of(answer))
    p50, p95 = percentile(walls, 0.5), percentile(walls, 0.95)
    print(f"{label:<34}{p50:>8.0f}{p95:>8.0f}{p50 / base:>9.1f}x{percentile(cpus, 0.5):>9.0f}"
          f"{percentile(cpus, 0.95):>9.0f}{statistics.median(used):>14.0f}")


def latency(a: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="kbsync-assist-") as tmp_name:
        tmp = Path(tmp_name)
        root = tmp / "ws"
        shutil.copytree(corpus(a.out, a.sessions), root, symlinks=True)
        configure(root)
        env = server_env(tmp)
        subprocess.run([*KBSYNC, "-w", str(root), "init"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([*KBSYNC, "-w", str(root), "index", "rebuild", "--search"], check=True, stdout=subprocess.DEVNULL)
        prompts = queries(a.runs)
        floor, floor_cpu = floor_ms(a.runs)
        base = percentile(floor, 0.5)
        print(f"{a.sessions:,} sessions, {a.runs} prompts (bench_search's queries), one process per prompt; "
              f"load average {os.getloadavg()[0]:.1f}")
        print(f"{'':<34}{'p50 ms':>8}{'p95 ms':>8}{'/floor':>10}{'CPU p50':>9}{'CPU p95':>9}{'median tokens':>14}")
        print(f"{'python -c pass (floor)':<34}{base:>8.0f}{percentile(floor, 0.95):>8.0f}{'':>10}"
              f"{percentile(floor_cpu, 0.5):>9.0f}{percentile(floor_cpu, 0.95):>9.0f}")
        measure("hook, no daemon (index opened)", root, prompts, env, base)
        server = WebServer(root, tmp, command=("run",))
        try:
            settled(root)
            idle(server.proc.pid, seconds=SETTLE_S)
            measure("hook, daemon running (its server)", root, prompts, env, base)
        finally:
            server.stop(timeout=60)


def locomo_blocks(a: argparse.Namespace) -> None:
    from bench_locomo import TUNING, make_workspace, place

    import locomo
    from kbsync.app.recall import memory_block
    from kbsync.app.retrieval import rebuild_search, rebuild_semantic

    picked = locomo.parse_range(a.convs)
    if any(i not in TUNING for i in picked):
        sys.exit("bench: conversations 5-9 are held out; use bench_locomo.py --held-out to check a result")
    convs = [c for c in locomo.load(a.locomo) if c.index in picked]
    held, used, n = 0, [], 0
    with tempfile.TemporaryDirectory(prefix="kbsync-assist-locomo-") as tmp_name:
        for c in convs:
            placed = place(make_workspace(Path(tmp_name) / f"conv-{c.index}", None), c)
            rebuild_search(placed.ws)
            if a.semantic and rebuild_semantic(placed.ws)[0] != 0:
                sys.exit(f"bench: the semantic build of conversation {c.index} failed")
            for q in c.questions:
                block = memory_block(placed.ws, q.text)
                text = locomo.normalise(block.text)
                held += any(t in text for t in placed.evidence_texts(q))
                used.append(block.tokens)
                n += 1
    print(f"LoCoMo conversations {a.convs}{' (semantic index built)' if a.semantic else ''}: {n} questions; the block holds an answer turn for "
          f"{held / max(1, n):.0%}, median {statistics.median(used):.0f} tokens")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=12000)
    ap.add_argument("--runs", type=int, default=40, help="hook processes per case")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "out", help="where corpora are cached")
    ap.add_argument("--locomo", type=Path, help="LoCoMo's locomo10.json: also the block's answer-turn rate")
    ap.add_argument("--convs", default="0-4")
    ap.add_argument("--semantic", action="store_true", help="with --locomo: also build each workspace's semantic index "
                    "(its leg of the search, and the instruction classifier's verdicts the block withholds)")
    ap.add_argument("--skip-latency", action="store_true", help="only the LoCoMo figures")
    a = ap.parse_args()
    os.environ.pop("KBSYNC_WORKSPACE", None)
    if not a.skip_latency:
        latency(a)
    if a.locomo:
        locomo_blocks(a)


if __name__ == "__main__":
    main()

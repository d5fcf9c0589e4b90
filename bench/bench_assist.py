#!/usr/bin/env python3
"""The assistant's prompt hook: how long `kbsync assist hook claude-code UserPromptSubmit` takes from process
start to its answer, with the daemon running (the block comes from its local server) and without (the hook
opens the search index itself), on the generated corpus; beside the floor of a Python process that does
nothing, in the same run. With --locomo, how often the block holds an answer turn on LoCoMo.

    python bench/bench_assist.py [--sessions 12000] [--runs 40] [--locomo PATH/locomo10.json [--convs 0-4]]

Printed: p50 and p95 in ms of the hook (the event JSON on stdin, exactly as the assistant sends it, the
answer read to its end) for each case, the floor's, and each case's p50 over the floor's [target: p95 <=
150 ms with the daemon]; the block's median tokens. With --locomo: each conversation its own workspace as
bench/bench_locomo.py builds them, every question of categories 1-4 given as the prompt, the share of
questions whose block holds an evidence turn's text [target >= 60%] and the block's median tokens [<= 600].
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


def hook_ms(root: Path, prompt: str, env: dict[str, str]) -> tuple[float, str]:
    """One hook process: milliseconds from its start to the end of its answer, and the answer."""
    event = json.dumps({"session_id": "bench-assist", "transcript_path": "", "cwd": str(root),
                        "hook_event_name": "UserPromptSubmit", "prompt": prompt}, ensure_ascii=False)
    start = time.perf_counter()
    done = subprocess.run([*KBSYNC, "-w", str(root), "assist", "hook", "claude-code", "UserPromptSubmit"],
                          input=event.encode("utf-8"), capture_output=True, env=env, check=True)
    ms = (time.perf_counter() - start) * 1000
    if done.stderr:
        sys.exit(f"bench: the hook failed: {done.stderr.decode('utf-8', 'replace')}")
    return ms, done.stdout.decode("utf-8")


def floor_ms(runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        out.append((time.perf_counter() - start) * 1000)
    return out


def tokens_of(answer: str) -> int:
    from kbsync.app.retrieval import estimate_tokens

    if not answer.strip():
        return 0
    return estimate_tokens(json.loads(answer)["hookSpecificOutput"]["additionalContext"])


def measure(label: str, root: Path, prompts: list[str], env: dict[str, str], base: float) -> None:
    hook_ms(root, prompts[0], env)  # the first run warms the disk cache, as an assistant's first prompt did
    times, used = [], []
    for prompt in prompts:
        ms, answer = hook_ms(root, prompt, env)
        times.append(ms)
        used.append(tokens_of(answer))
    p50, p95 = percentile(times, 0.5), percentile(times, 0.95)
    print(f"{label:<34}{p50:>8.0f}{p95:>8.0f}{p50 / base:>9.1f}x{statistics.median(used):>14.0f}")


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
        floor = floor_ms(a.runs)
        base = percentile(floor, 0.5)
        print(f"{a.sessions:,} sessions, {a.runs} prompts (bench_search's queries), one process per prompt")
        print(f"{'':<34}{'p50 ms':>8}{'p95 ms':>8}{'/floor':>10}{'median tokens':>14}")
        print(f"{'python -c pass (floor)':<34}{base:>8.0f}{percentile(floor, 0.95):>8.0f}")
        measure("hook, no daemon (index opened)", root, prompts, env, base)
        server = WebServer(root, tmp, command=("run",))
        try:
            settled(root)
            idle(server.proc.pid, seconds=SETTLE_S)
            measure("hook, daemon running (its server)", root, prompts, env, base)
        finally:
            server.stop(timeout=60)


def locomo_blocks(a: argparse.Namespace) -> None:
    import locomo
    from bench_locomo import TUNING, make_workspace, place

    from kbsync.app.recall import memory_block
    from kbsync.app.retrieval import rebuild_search

    picked = locomo.parse_range(a.convs)
    if any(i not in TUNING for i in picked):
        sys.exit("bench: conversations 5-9 are held out; use bench_locomo.py --held-out to check a result")
    convs = [c for c in locomo.load(a.locomo) if c.index in picked]
    held, used, n = 0, [], 0
    with tempfile.TemporaryDirectory(prefix="kbsync-assist-locomo-") as tmp_name:
        for c in convs:
            placed = place(make_workspace(Path(tmp_name) / f"conv-{c.index}", None), c)
            rebuild_search(placed.ws)
            for q in c.questions:
                block = memory_block(placed.ws, q.text)
                text = locomo.normalise(block.text)
                held += any(t in text for t in placed.evidence_texts(q))
                used.append(block.tokens)
                n += 1
    print(f"LoCoMo conversations {a.convs}: {n} questions; the block holds an answer turn for "
          f"{held / max(1, n):.0%}, median {statistics.median(used):.0f} tokens")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=12000)
    ap.add_argument("--runs", type=int, default=40, help="hook processes per case")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "out", help="where corpora are cached")
    ap.add_argument("--locomo", type=Path, help="LoCoMo's locomo10.json: also the block's answer-turn rate")
    ap.add_argument("--convs", default="0-4")
    ap.add_argument("--skip-latency", action="store_true", help="only the LoCoMo figures")
    a = ap.parse_args()
    os.environ.pop("KBSYNC_WORKSPACE", None)
    if not a.skip_latency:
        latency(a)
    if a.locomo:
        locomo_blocks(a)


if __name__ == "__main__":
    main()

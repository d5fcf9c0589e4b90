#!/usr/bin/env python3
"""Search benchmark: index build, per-file update, search latency against rg, and recall by tokenizer.

    python bench/bench_search.py [--sessions 12000] [--queries 100] [--runs 3] [--workspace DIR]

Generates the workspace with the project's corpus generator, bench/gen_workspace.py (or the
generator script that $KBSYNC_GEN names, with the same command line; see bench/common.py) unless
--workspace names one already generated. Prints medians of --runs runs.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from kbsync.retrieval import db, index, ranking, search
from kbsync.retrieval.db import sqlite3
from kbsync.retrieval.text import CJK_RUN, parse_query
from kbsync.store.workspace import Workspace

ZH = ("付款 条款 违约 确认 字段 格式 超时 重试 回滚 索引 缓存 冲突 版本 提交 推送 决定 下周 法务 复核 风险 周五 结论 "
      "合同 接口 联调 需求 评审 故障 复盘 发布 计划 数据 迁移 方案 性能 压测 安全 审计 成本 客户 访谈 代码 架构").split()
EN = "deploy pipeline failed lock stale retry budget".split()


def queries(n: int) -> list[str]:
    rng = random.Random(1)
    shapes: list[Callable[[], str]] = [
        lambda: rng.choice(ZH),
        lambda: rng.choice(ZH),
        lambda: rng.choice(EN),
        lambda: f"{rng.choice(ZH)} {rng.choice(EN)}",
        lambda: f"{rng.choice(ZH)}{rng.choice(ZH)}",
        lambda: f"tag:{rng.choice(['合同', '风险', '法务', '部署'])} {rng.choice(ZH)}",
        lambda: f"status:open {rng.choice(ZH)}",
        lambda: f"since:2025-06-01 until:2025-06-30 {rng.choice(ZH)}",
    ]
    return [shapes[i % len(shapes)]() for i in range(n)]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def generate(out: Path, sessions: int) -> None:
    from common import generator  # bench/gen_workspace.py, or $KBSYNC_GEN

    subprocess.run([sys.executable, str(generator()), str(out), "--sessions", str(sessions), "--dirty", "0.02"],
                   check=True, stdout=subprocess.DEVNULL)


def bench_build(ws: Workspace, runs: int) -> None:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        got = index.rebuild(ws)
        times.append(time.perf_counter() - start)
    size = db.db_path(ws.state_dir).stat().st_size / 1e6
    print(f"build: median {statistics.median(times):.2f} s of {runs} ({got.files} files, {got.records} records, "
          f"{got.broken} broken; database {size:.0f} MB)")


def bench_update(ws: Workspace, n: int = 40) -> None:
    rels = [r for r in ws.iter_files() if r.startswith("sessions/")]
    picked = random.Random(2).sample(rels, n)
    times = []
    for rel in picked:
        with open(ws.path(rel), "a", encoding="utf-8") as fh:
            fh.write("\n追加一行 appended line\n")
        start = time.perf_counter()
        index.update(ws, [rel])
        times.append(time.perf_counter() - start)
    print(f"update one file: p50 {ms(pct(times, 0.5))}, p95 {ms(pct(times, 0.95))} over {n} files")


def bench_search(ws: Workspace, qs: list[str], runs: int) -> None:
    fed: list[float] = []
    one: list[float] = []
    rg: list[float] = []
    conn = db.connect(db.db_path(ws.state_dir))
    hits = 0
    for q in qs:
        parsed = parse_query(q)
        fed.append(min(_time(lambda: search.federated(ws, q)) for _ in range(runs)))
        one.append(min(_time(lambda: ranking.search(conn, parsed, "session", 5, bodies=index.bodies(ws))) for _ in range(runs)))
        argv = ["rg", "-l", "-F", "-e", parsed.terms[0], str(ws.root / "sessions")]
        rg.append(min(_time(lambda: subprocess.run(argv, stdout=subprocess.DEVNULL)) for _ in range(runs)))
        hits += bool(search.federated(ws, q).results)
    conn.close()
    for name, xs in (("federated search (4 sources, fused)", fed), ("sessions source alone", one),
                     ("rg -l -F (first word)", rg)):
        print(f"{name}: p50 {ms(pct(xs, 0.5))}, p95 {ms(pct(xs, 0.95))}")
    print(f"rg p50 / federated p50 = {pct(rg, 0.5) / pct(fed, 0.5):.1f}x; {hits}/{len(qs)} queries with hits")


def _time(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


# ---- recall by tokenizer on the labelled set -----------------------------------------

def category(q: str) -> str:
    words = parse_query(q).terms
    cjk = [w for w in words if CJK_RUN.fullmatch(w)]
    if len(cjk) == len(words):
        return "Chinese" if all(len(w) == 2 for w in cjk) else "Chinese, other lengths"
    return "English" if not cjk and not any(CJK_RUN.search(w) for w in words) else "mixed"


def recall_table() -> None:
    from helpers.retrieval import LABELLED, make_workspace

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        names = make_workspace(root, noise=300)
        ws = Workspace(root)
        index.rebuild(ws)
        conn = db.connect(db.db_path(ws.state_dir))
        by_key = {v: k for k, v in names.items()}
        texts = {n: (root / p).read_text(encoding="utf-8") for n, p in names.items() if p.startswith("sessions/")}
        runners = {
            "CJK bigrams (kbsync)": lambda q: {by_key.get(r.key, "") for r in
                                               ranking.search(conn, parse_query(q), "session", 10, bodies=index.bodies(ws))},
            "unicode61 alone": _baseline(texts, "unicode61"),
            "trigram": _baseline(texts, "trigram"),
        }
        labelled = [(q, exp) for q, kind, exp in LABELLED if kind == "session" and parse_query(q).terms]
        cats = sorted({category(q) for q, _ in labelled})
        print(f"recall@10 on {len(labelled)} labelled text queries, 300 distractor sessions:")
        for name, run in runners.items():
            parts = [f"{c} {_recall([x for x in labelled if category(x[0]) == c], run)}" for c in cats]
            print(f"  {name}: all {_recall(labelled, run)}; " + "; ".join(parts))
        conn.close()


def _recall(labelled: list[tuple[str, frozenset[str]]], run: Callable[[str], set[str]]) -> str:
    found = sum(len(run(q) & exp) for q, exp in labelled)
    relevant = sum(len(exp) for _, exp in labelled)
    return f"{found}/{relevant} ({found / relevant:.0%})"


def _baseline(texts: dict[str, str], tokenizer: str) -> Callable[[str], set[str]]:
    """Plain FTS5 with a stock tokenizer over the raw file text, every word required."""
    fts = sqlite3.connect(":memory:")
    fts.execute(f"CREATE VIRTUAL TABLE t USING fts5(name, body, tokenize = '{tokenizer}')")
    fts.executemany("INSERT INTO t VALUES (?, ?)", list(texts.items()))

    def run(q: str) -> set[str]:
        expr = " AND ".join(f'"{w}"' for w in parse_query(q).terms)
        try:
            return {r[0] for r in fts.execute("SELECT name FROM t WHERE t MATCH ? LIMIT 10", (expr,))}
        except sqlite3.OperationalError:
            return set()
    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=12000)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workspace", type=Path, help="an already generated workspace to use (it gets a .kbsync/)")
    a = ap.parse_args()
    if shutil.which("rg") is None:
        sys.exit("rg (ripgrep) is needed as the reference")
    recall_table()
    tmp = None
    if a.workspace is None:
        tmp = tempfile.mkdtemp(prefix="kbsync-bench-")
        a.workspace = Path(tmp) / "ws"
        generate(a.workspace, a.sessions)
    ws = Workspace(a.workspace.resolve())
    print(f"workspace: {sum(1 for _ in ws.iter_files())} Markdown files; {os.cpu_count()} CPUs")
    bench_build(ws, a.runs)
    bench_update(ws)
    bench_search(ws, queries(a.queries), a.runs)
    if tmp:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()

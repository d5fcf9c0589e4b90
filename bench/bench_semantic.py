#!/usr/bin/env python3
"""The semantic index at scale: its build (wall, CPU, the worker's memory) and the search latency it adds.

    python bench/bench_semantic.py [--sessions 12000] [--passages N] [--queries 50] [--out DIR]

A copy of the generated corpus (bench/common.py's `corpus`, cached under --out) gets its search database, then
`kbsync index rebuild --semantic` (the worker in the foreground): wall and CPU seconds (the command and the
worker it waits for), the worker's peak RSS, the texts embedded (heads, passages) and the CPU per text of
each kind, from which the build of another size follows (heads grow with the sessions, the passages are
capped by [search] semantic_passages, which --passages sets). Then --queries searches (words of the corpus's summaries) through the
application layer, as a server asks them (the semantic worker warm): p50/p95 of the fused search, of the
same search with the semantic source left out (the baseline, in the same run), and of the semantic source
alone (the worker's answer, over its pipe). Last, the one part of a semantic search whose cost grows with
the workspace, the brute-force scoring, over the real vectors repeated up to --rows rows (15,000: the
heads and passages of 12,000 sessions), in this process.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from common import corpus, percentile, spawned
from kbsync import config
from kbsync.app.retrieval import search
from kbsync.retrieval import semanticclient
from kbsync.retrieval.search import WORKSPACE_KINDS
from kbsync.store.workspace import Workspace


def build(root: Path) -> None:
    kbsync = [sys.executable, "-m", "kbsync", "-q", "-w", str(root)]
    wall, cpu, rss, code = spawned([*kbsync, "index", "rebuild", "--search"])
    print(f"search database: {wall:.1f} s wall, {cpu:.1f} s CPU (exit {code})")
    wall, cpu, rss, code = spawned([*kbsync, "index", "rebuild", "--semantic"])
    heads, passages = counts(root)
    print(f"semantic index: {wall:.1f} s wall, {cpu:.1f} s CPU, peak RSS {rss} MB (the worker), exit {code}; "
          f"{heads:,} heads + {passages:,} passages = {heads + passages:,} texts, {cpu / max(1, heads + passages) * 1000:.0f} ms CPU a text")


def counts(root: Path) -> tuple[int, int]:
    c = sqlite3.connect(root / ".kbsync" / "semantic.sqlite")
    try:
        heads = c.execute("SELECT count(DISTINCT digest) FROM units WHERE ordinal = 0").fetchone()[0]
        passages = c.execute("SELECT count(DISTINCT digest) FROM units WHERE ordinal > 0").fetchone()[0]
        return int(heads), int(passages)
    finally:
        c.close()


def queries(root: Path, n: int) -> list[str]:
    """`n` queries of 3-6 words from the corpus's summaries (fixed seed)."""
    rng = random.Random(11)
    words: list[str] = []
    for path in sorted((root / "sessions").rglob("*.md"))[:500]:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("summary:"):
                words += line.split(":", 1)[1].replace('"', " ").replace("：", " ").replace("；", " ").split()
    return [" ".join(rng.sample(words, rng.randint(3, 6))) for _ in range(n)]


def latencies(ws: Workspace, qs: list[str], *, semantic: bool) -> list[float]:
    names = [*WORKSPACE_KINDS, "semantic"] if semantic else list(WORKSPACE_KINDS)
    search(ws, qs[0], sources=names)  # warm: the worker started, the vectors read
    out = []
    for q in qs:
        start = time.perf_counter()
        search(ws, q, sources=names)
        out.append((time.perf_counter() - start) * 1000)
    return out


def leg_alone(ws: Workspace, qs: list[str]) -> list[float]:
    out = []
    for q in qs:
        start = time.perf_counter()
        semanticclient.nearest(ws, q, list(WORKSPACE_KINDS.values()), ws.config.search.per_source)
        out.append((time.perf_counter() - start) * 1000)
    return out


def scoring(root: Path, rows: int, qs: list[str]) -> list[float]:
    """Milliseconds of Matrix.top over the index's vectors repeated to `rows` rows, one query each."""
    from kbsync.retrieval import semanticstore as store
    from kbsync.retrieval.semanticmodel import Model
    from kbsync.retrieval.semanticsearch import Matrix

    conn = store.connect(root / ".kbsync" / "semantic.sqlite")
    units = store.embedded_units(conn)
    conn.close()
    matrix = Matrix((units * (rows // max(1, len(units)) + 1))[:rows])
    model = Model(1)
    vectors = [model.query(q) for q in qs]
    out = []
    for v in vectors:
        start = time.perf_counter()
        matrix.top(v, list(WORKSPACE_KINDS.values()), 5)
        out.append((time.perf_counter() - start) * 1000)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=12000)
    ap.add_argument("--passages", type=int, default=None, help="[search] semantic_passages (default: the default)")
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--rows", type=int, default=15000, help="rows of the scoring measure (default 15,000)")
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "kbsync-bench")
    a = ap.parse_args()
    src = corpus(a.out, a.sessions)
    work = Path(tempfile.mkdtemp(prefix="kbsync-semantic-")) / "ws"
    shutil.copytree(src, work, ignore=shutil.ignore_patterns(".kbsync", ".git"))
    if a.passages is not None:
        (work / ".kbsync").mkdir(exist_ok=True)
        (work / ".kbsync" / "config.toml").write_text(f"[search]\nsemantic_passages = {a.passages}\n")
    try:
        build(work)
        ws = Workspace(*config.resolve(str(work), None))
        qs = queries(work, a.queries)
        base = latencies(ws, qs, semantic=False)
        fused = latencies(ws, qs, semantic=True)
        alone = leg_alone(ws, qs)
        for name, got in (("keyword sources only (baseline)", base), ("with the semantic source", fused),
                          ("the semantic source alone", alone)):
            print(f"search, {name}: p50 {percentile(got, 0.5):.1f} ms, p95 {percentile(got, 0.95):.1f} ms")
        print(f"fused / baseline p95: {percentile(fused, 0.95) / percentile(base, 0.95):.2f}x")
        got = scoring(work, a.rows, qs)
        print(f"scoring {a.rows:,} vectors: p50 {percentile(got, 0.5):.1f} ms, p95 {percentile(got, 0.95):.1f} ms")
    finally:
        shutil.rmtree(work.parent)


if __name__ == "__main__":
    main()

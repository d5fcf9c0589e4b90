#!/usr/bin/env python3
"""What matching a word's forms (kbsync.retrieval.stem) costs the keyword search, in one run: the same queries
with forms and with each word its own only form, in turns.

    python bench/bench_word_forms.py --sessions 100000 [--rounds 3] [--locomo PATH/locomo10.json]

The workspace is the generated corpus of --sessions (bench/common.py's cache under --out; its search index is
built once, which takes minutes at 100,000) or --workspace. The queries are bench_search.py's 100 and, with
--locomo, 50 of LoCoMo's questions (conversations 0-4), plus five English questions in the corpus's words.
Prints p50 and p95 of each, in process (kbsync.retrieval.ranking.searches over sessions and the board).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Callable

import bench_search

import locomo
from common import corpus
from kbsync.retrieval import db as searchdb
from kbsync.retrieval import index as searchindex
from kbsync.retrieval import ranking, relevance, stem, text
from kbsync.store.workspace import Workspace

ENGLISH = ["deploy pipeline failed", "the release was rolled back after the tests failed", "lock stale retry budget",
           "why did the deploy fail on friday", "what did we decide about the rollback plan"]


def queries(locomo_path: Path | None) -> list[str]:
    found = bench_search.queries(100) + ENGLISH
    if locomo_path:
        found += [q.text for c in locomo.load(locomo_path)[:5] for q in c.questions][::15][:50]
    return found


def _forms_off(word: str) -> tuple[str, ...]:
    return (word,)


def one_round(ws: Workspace, qs: list[str], forms: Callable[[str], tuple[str, ...]]) -> list[float]:
    for module in (text, relevance):  # the two places a term's forms are asked for
        setattr(module, "forms", forms)
    took = []
    for q in qs:
        start = time.perf_counter()
        with searchdb.reading(searchdb.db_path(ws.state_dir)) as conn:
            ranking.searches(conn, text.parse_query(q), ["session", "board"], 10, bodies=searchindex.bodies(ws))
        took.append(time.perf_counter() - start)
    return took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=100_000)
    ap.add_argument("--workspace", type=Path, help="an indexed workspace instead of the generated corpus")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--locomo", type=Path, help="LoCoMo's locomo10.json: add 50 of its questions")
    ap.add_argument("--out", type=Path, default=Path("/tmp/kbsync-bench"), help="where generated corpora are cached")
    a = ap.parse_args()
    ws = Workspace(a.workspace or corpus(a.out, a.sessions))
    searchindex.build_missing(ws)
    qs = queries(a.locomo)
    on, off = [], []
    one_round(ws, qs, stem.forms)
    one_round(ws, qs, _forms_off)  # warm both
    for _ in range(a.rounds):
        on += one_round(ws, qs, stem.forms)
        off += one_round(ws, qs, _forms_off)
    for name, values in (("word forms", on), ("each word alone", off)):
        print(f"{name:16} {len(qs)} queries x {a.rounds}: p50 {bench_search.pct(values, 0.5) * 1000:.1f} ms, "
              f"p95 {bench_search.pct(values, 0.95) * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())

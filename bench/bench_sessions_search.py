"""The web board's sessions search (kbsync.app.browse.search_sessions): the count and a page of ranked
sessions on the 2,000-session corpus, beside the federated search the page ran before (its 20 best of every
kind, no count) in the same run, in process on a workspace indexed beforehand.

    python bench/bench_sessions_search.py [--sessions 2000] [--runs 9]

Printed per query: how many sessions match, then the median (and slowest) ms of: the federated search
(`kbsync search`'s, top 20: the baseline), the count alone (ranking.count), page 1's ranking alone (the
first window of 50 candidates ranked), page 1 (count, ranking, the semantic blend, the classifier's flags
and the snippets of 25 sessions), page 4, and the last page; each one's ratio to the baseline.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Callable

from common import KBSYNC, corpus

QUERIES = ("部署", "锁文件 回滚", "deploy")


def timed(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    fn()  # one not counted
    took = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        took.append((time.perf_counter() - start) * 1000)
    return statistics.median(took), max(took)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "kbsync-bench")
    a = ap.parse_args()

    from kbsync.app import browse, retrieval
    from kbsync.app.workspace import open_workspace
    from kbsync.retrieval import db, index, ranking
    from kbsync.retrieval.text import parse_query

    with tempfile.TemporaryDirectory(prefix="kbsync-sessions-search-") as tmp:
        root = Path(tmp) / "ws"
        shutil.copytree(corpus(a.cache, a.sessions), root, symlinks=True)
        for args in (("init",), ("index", "rebuild", "--search")):
            subprocess.run([*KBSYNC, "-w", str(root), *args], check=True, stdout=subprocess.DEVNULL)
        ws = open_workspace(str(root), None)
        browse.browse_sessions(ws)  # the page's first view: the index catches up with the files
        print(f"{a.sessions} sessions, {a.runs} runs each; median (slowest) ms")
        for q in QUERIES:
            with db.reading(db.db_path(ws.state_dir)) as conn:
                total = ranking.count(conn, parse_query(q), "session")
            last = max(1, -(-total // browse.SEARCH_PAGE))
            base = timed(lambda: retrieval.search(ws, q, top=20), a.runs)

            def count() -> None:
                with db.reading(db.db_path(ws.state_dir)) as conn:
                    ranking.count(conn, parse_query(q), "session")

            def first_window() -> None:
                with db.reading(db.db_path(ws.state_dir)) as conn:
                    ranking.window(conn, parse_query(q), "session", 0, 50, bodies=index.bodies(ws))

            rows = [("federated search, top 20 (baseline)", base), ("count alone", timed(count, a.runs)),
                    ("page 1's ranking alone (ranking.window)", timed(first_window, a.runs))]
            for n in dict.fromkeys((1, min(4, last), last)):
                rows.append((f"page {n} of {last}", timed(partial(browse.search_sessions, ws, q, page=n), a.runs)))
            print(f"\n{q!r}: {total} sessions match")
            for what, (median, worst) in rows:
                print(f"  {what}: {median:.1f} ({worst:.1f}), x{median / base[0]:.2f} of the baseline")


if __name__ == "__main__":
    main()

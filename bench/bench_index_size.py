#!/usr/bin/env python3
"""What a leaner search index would weigh: FTS5 layouts built from a workspace's records, sizes printed.

    python bench/bench_index_size.py WORKSPACE [--layouts full column unigram no-trailing column-no-trailing]

WORKSPACE holds a search index (`kbsync index rebuild --search`). Its records' indexed text is made again
from the files (the index stores none) and written, for each layout, into a fresh database holding only
an FTS5 table (no stored text: `content=''`, `columnsize=0`; merged with 'optimize'; vacuumed); printed
beside the current database's parts (SQLite's dbstat) and the sessions' bytes (`du -sb sessions`):

- full: the index's tokens (CJK bigrams and each run's last character) with positions (detail=full);
- column: the same tokens without positions (detail=column, the index's layout: no phrase queries);
- unigram: each CJK character its own token, with positions;
- no-trailing: bigrams without each run's last character, with positions;
- column-no-trailing: bigrams without each run's last character, without positions.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator

from kbsync.retrieval import index
from kbsync.retrieval.db import sqlite3
from kbsync.retrieval.records import records_for
from kbsync.retrieval.text import index_text
from kbsync.store.workspace import Workspace

CJK = "\u3400-\u4dbf\u4e00-\u9fff"
LAYOUTS: dict[str, tuple[str, Callable[[str], str]]] = {
    "full": ("", lambda t: t),
    "column": (", detail=column", lambda t: t),
    "unigram": ("", lambda t: re.sub(f"(?<= )([{CJK}])[{CJK}](?= )", r"\1", t)),
    "no-trailing": ("", lambda t: re.sub(f" [{CJK}](?= )", " ", t)),
    "column-no-trailing": (", detail=column", lambda t: re.sub(f" [{CJK}](?= )", " ", t)),
}


def rows(root: Path) -> Iterator[tuple[int, str, str, str]]:
    """(rowid, kind, head, body) of every record, as the index tokenizes them."""
    ws = Workspace(root)
    n = 0
    for rel in ws.iter_files():
        if index.indexable(rel):
            for r in records_for(rel, ws.read_text(rel), ws.config.protocol.default_offset, flagged=False):
                n += 1
                yield n, r.kind, index_text(" ".join([r.title, r.summary, *r.tags])), index_text(r.body)


def parts(db: Path) -> list[tuple[str, int]]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()


def build(root: Path, out: Path, layout: str) -> float:
    options, rewrite = LAYOUTS[layout]
    start = time.perf_counter()
    with sqlite3.connect(out) as conn:
        conn.execute(f"CREATE VIRTUAL TABLE f USING fts5(kind, head, body, content='', columnsize=0{options}, "
                     "tokenize = 'unicode61 remove_diacritics 2')")
        conn.executemany("INSERT INTO f(rowid, kind, head, body) VALUES (?, ?, ?, ?)",
                         ((r, k, rewrite(h), rewrite(b)) for r, k, h, b in rows(root)))
        conn.execute("INSERT INTO f(f) VALUES ('optimize')")
    with sqlite3.connect(out) as conn:
        conn.execute("VACUUM")
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--layouts", nargs="+", choices=sorted(LAYOUTS), default=["full", "column", "unigram", "no-trailing", "column-no-trailing"])
    a = ap.parse_args()
    db = a.workspace / ".kbsync" / "search.sqlite"
    sessions = int(subprocess.run(["du", "-sb", str(a.workspace / "sessions")], capture_output=True, text=True,
                                  check=True).stdout.split()[0])
    print(f"sessions: {sessions / 1e6:.1f} MB; current database: {db.stat().st_size / 1e6:.1f} MB "
          f"({db.stat().st_size / sessions:.2f}x)")
    for name, size in parts(db)[:6]:
        print(f"  {name}: {size / 1e6:.1f} MB")
    with tempfile.TemporaryDirectory() as tmp:
        for layout in a.layouts:
            out = Path(tmp) / f"{layout}.sqlite"
            took = build(a.workspace, out, layout)
            size = out.stat().st_size
            print(f"{layout:>12}: FTS5 alone {size / 1e6:.1f} MB ({size / sessions:.2f}x the sessions), built in {took:.1f} s")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The work of a search index rebuild, one stage at a time, in this process, for a sample of session files.

    python bench/bench_rebuild_stages.py WORKSPACE --stage {none,read,records,rows,write,all} [--files 300]

Takes every 40th session file of WORKSPACE (in path order, at most --files of them) and runs the rebuild's
stages up to --stage: read (the file and its state), records (parsing, without the embedded-instruction
check), rows (the records' rows and full-text tokens), write (the rows into a fresh database, as the
rebuild's writing process does), all (every stage with the check, as a rebuild does it). Meant to be run
under an instruction counter, whose counts do not move with the load of a shared machine:

    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \\
        python bench/bench_rebuild_stages.py WS --stage rows

The difference between two stages' counts is the cost of the stages between them; `none` is the start-up.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from kbsync.retrieval import db, index
from kbsync.retrieval.records import records_for
from kbsync.store.workspace import Workspace

STAGES = ("none", "read", "records", "rows", "write", "all")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--stage", choices=STAGES, required=True)
    ap.add_argument("--files", type=int, default=300)
    a = ap.parse_args()
    if a.stage == "none":
        return
    ws = Workspace(a.workspace)
    paths = [p for p in ws.iter_files("sessions")][::40][:a.files]
    upto = STAGES.index(a.stage)
    rows = []
    for rel in paths:
        got = index._read(ws, rel)
        if upto < STAGES.index("records") or not isinstance(got, tuple):
            continue
        records = records_for(rel, got[0], ws.config.protocol.default_offset, flagged=a.stage == "all")
        if upto >= STAGES.index("rows"):
            rows.append(db.prepared(rel, got[1], records))
    if upto >= STAGES.index("write"):
        write(rows)


def write(rows: list[db.Prepared]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        conn = db.new_database(Path(tmp) / "bench.sqlite")
        with db.transaction(conn):
            for at in range(0, len(rows), index.BUILD_BATCH):
                db.put_rows(conn, rows[at:at + index.BUILD_BATCH])
            finish = getattr(db, "finish", None)  # absent before schema 6 (an older checkout on PYTHONPATH)
            if finish is not None:
                finish(conn)
        conn.close()


if __name__ == "__main__":
    main()

"""An update of many files commits them a chunk at a time, so a search meanwhile never waits out its timeout
behind one long transaction ("database is locked")."""

from __future__ import annotations

from pathlib import Path

from kbsync.retrieval import db
from kbsync.retrieval.db import sqlite3


def test_each_chunk_is_committed_before_the_next_is_written(tmp_path: Path) -> None:
    path = tmp_path / "search.sqlite"
    conn = db.connect(path)
    seen: list[int] = []

    def write(n: int) -> int:
        if n % db.CHUNK_FILES == 0:  # the first file of a chunk: what a search sees now
            other = sqlite3.connect(path, timeout=0)  # no wait: a held lock would raise here
            seen.append(other.execute("SELECT count(*) FROM files").fetchone()[0])
            other.close()
        conn.execute("INSERT INTO files VALUES (?, ?, ?)", (f"f{n}.md", n, n))
        return n

    got = db.in_chunks(conn, list(range(2 * db.CHUNK_FILES + 5)), write)
    assert got == list(range(2 * db.CHUNK_FILES + 5))
    assert seen == [0, db.CHUNK_FILES, 2 * db.CHUNK_FILES]
    conn.close()

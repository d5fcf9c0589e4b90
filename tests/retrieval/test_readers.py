"""kbsync.retrieval.db.reading: the connections kept for searches, shared by threads, bounded in number, renewed when a
rebuild swaps the database file."""

from __future__ import annotations

import threading
from pathlib import Path

from helpers.retrieval import make_workspace
from kbsync.retrieval import db, index, search
from kbsync.store.workspace import Workspace


def _kept(path: Path) -> list[db.Connection]:
    return [conn for _, conn in db._kept.get(str(path), [])]


def test_threads_share_a_few_kept_connections(tmp_path: Path) -> None:
    make_workspace(tmp_path)
    ws = Workspace(tmp_path)
    index.rebuild(ws)
    path = db.db_path(ws.state_dir)
    results: list[list[str]] = []
    start = threading.Barrier(12)

    def one() -> None:
        start.wait()
        results.append([hit.key for hit in search.federated(ws, "合同").results])

    threads = [threading.Thread(target=one) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 12 and all(r == results[0] and r for r in results)
    kept = _kept(path)
    assert 1 <= len(kept) <= db.KEPT_READERS, "twelve threads at once keep no more than the bound"
    later: list[db.Connection] = []
    worker = threading.Thread(target=lambda: later.extend([*_kept(path)] if search.federated(ws, "合同") else []))
    worker.start()
    worker.join()
    assert set(map(id, later)) <= set(map(id, kept)), "a new thread reuses a kept connection"


def test_a_rebuild_swaps_the_file_and_the_next_search_reads_the_new_one(tmp_path: Path) -> None:
    make_workspace(tmp_path)
    ws = Workspace(tmp_path)
    index.rebuild(ws)
    path = db.db_path(ws.state_dir)
    before = [hit.key for hit in search.federated(ws, "合同").results]
    old = _kept(path)
    index.rebuild(ws)
    assert [hit.key for hit in search.federated(ws, "合同").results] == before
    assert not set(map(id, _kept(path))) & set(map(id, old)), "the old file's connections were let go"
